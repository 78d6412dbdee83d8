/*
 * stage_probe.c: compiled by tests/CMakeLists.txt as a file of one pipeline stage that includes
 * one header (STAGE_PROBE_HEADER), to show that the build lets a stage see only the stages it
 * may use: a header of a stage to its right is not found.
 */
#include STAGE_PROBE_HEADER

int stage_probe_compiled;

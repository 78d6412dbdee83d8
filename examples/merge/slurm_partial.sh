#!/bin/bash
# slurm_partial.sh: one task of a Slurm job array: the partial summary of one trace file
# (docs/merge.md). Submit with one task per file, then merge when all are done:
#
#   n=$(ls traces | wc -l)
#   job=$(sbatch --parsable --array=0-$((n - 1)) examples/merge/slurm_partial.sh traces partials)
#   sbatch --dependency=afterok:$job --wrap "opscope merge partials > report.txt"
#
#SBATCH --job-name=opscope-partial
#SBATCH --cpus-per-task=1
#SBATCH --mem=4G
set -euo pipefail
traces=$1 out=$2
mkdir -p "$out"
# the task's file: the n-th in byte order (LC_ALL=C), the same list in every task
mapfile -t files < <(LC_ALL=C ls -1 "$traces")
f=${files[$SLURM_ARRAY_TASK_ID]}
exec "${OPSCOPE:-opscope}" report --format partial -o "$out/$f.partial" "$traces/$f"

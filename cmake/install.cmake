# cmake --install: the CLI, libopscope (shared with its SONAME links, and static), the public
# header, a pkg-config file, a CMake package (find_package(opscope): opscope::opscope and
# opscope::opscope_static) and, when the extension is built, the Python package (opscope/ and
# opscope_boot/) where the interpreter looks for packages of that prefix. Everything is placed
# relative to the prefix, so `cmake --install build --prefix DIR` works for any DIR, and the
# CLI finds the library and the Python package from its own location (opscope_config.h).
include(CMakePackageConfigHelpers)

install(TARGETS opscope opscope_static opscope_cli)
install(DIRECTORY include/opscope DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Python: OPSCOPE_PYTHON_INSTALL_DIR (relative to the prefix, or absolute), by default the
# site directory of the interpreter's layout for CMAKE_INSTALL_PREFIX (cmake/python_install_dir.py).
set(OPSCOPE_PYTHON_INSTALL_DIR "" CACHE PATH
	"where to install the Python package (empty: the interpreter's site directory for the prefix)")
set(OPSCOPE_PY_INSTALL_DIR "")
if (TARGET opscope_python)
	set(OPSCOPE_PY_INSTALL_DIR ${OPSCOPE_PYTHON_INSTALL_DIR})
	if (NOT OPSCOPE_PY_INSTALL_DIR)
		execute_process(COMMAND ${Python3_EXECUTABLE}
			${CMAKE_CURRENT_LIST_DIR}/python_install_dir.py ${CMAKE_INSTALL_PREFIX}
			OUTPUT_VARIABLE OPSCOPE_PY_INSTALL_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
			RESULT_VARIABLE rc)
		if (NOT rc EQUAL 0 OR NOT OPSCOPE_PY_INSTALL_DIR)
			message(FATAL_ERROR "opscope: cannot ask ${Python3_EXECUTABLE} for its site "
				"directory; set OPSCOPE_PYTHON_INSTALL_DIR")
		endif ()
	endif ()
	message(STATUS "opscope: Python package installs to ${OPSCOPE_PY_INSTALL_DIR}")
	install(TARGETS opscope_python LIBRARY DESTINATION ${OPSCOPE_PY_INSTALL_DIR}/opscope)
	if (TARGET opscope_torch)
		install(TARGETS opscope_torch LIBRARY DESTINATION ${OPSCOPE_PY_INSTALL_DIR}/opscope)
	endif ()
	foreach (pkg opscope opscope_boot)
		install(DIRECTORY python/${pkg}/ DESTINATION ${OPSCOPE_PY_INSTALL_DIR}/${pkg}
			FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
	endforeach ()
endif ()

# What the CLI's `record` looks for from <prefix>/bin (src/cli/cmd_record.c): the library
# and the Python package, relative to the bin directory unless installed at absolute paths.
function(opscope_from_bin out dir)
	if (IS_ABSOLUTE "${dir}")
		set(${out} "${dir}" PARENT_SCOPE)
	else ()
		file(RELATIVE_PATH rel ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_PREFIX}/${dir})
		set(${out} "${rel}" PARENT_SCOPE)
	endif ()
endfunction()
opscope_from_bin(OPSCOPE_LIBDIR_FROM_BIN ${CMAKE_INSTALL_LIBDIR})
set(OPSCOPE_PYDIR_FROM_BIN "")
if (OPSCOPE_PY_INSTALL_DIR)
	opscope_from_bin(OPSCOPE_PYDIR_FROM_BIN ${OPSCOPE_PY_INSTALL_DIR})
endif ()
get_target_property(OPSCOPE_SOVERSION opscope SOVERSION)
get_target_property(OPSCOPE_LIB_VERSION opscope VERSION)
set(OPSCOPE_SONAME
	${CMAKE_SHARED_LIBRARY_PREFIX}opscope${CMAKE_SHARED_LIBRARY_SUFFIX}.${OPSCOPE_SOVERSION})

# pkg-config, relocatable: paths from the .pc file's own directory (${pcfiledir}).
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
function(opscope_from_pc out full)
	file(RELATIVE_PATH rel ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${full})
	string(REGEX REPLACE "/$" "" rel "${rel}")
	set(${out} "\${pcfiledir}/${rel}" PARENT_SCOPE)
endfunction()
opscope_from_pc(OPSCOPE_PC_LIBDIR ${CMAKE_INSTALL_FULL_LIBDIR})
opscope_from_pc(OPSCOPE_PC_INCLUDEDIR ${CMAKE_INSTALL_FULL_INCLUDEDIR})
set(OPSCOPE_PC_LIBS_PRIVATE "-lpthread")
foreach (lib ${CMAKE_DL_LIBS} m)
	string(APPEND OPSCOPE_PC_LIBS_PRIVATE " -l${lib}")
endforeach ()
if (OPSCOPE_HAVE_ZSTD)
	string(APPEND OPSCOPE_PC_LIBS_PRIVATE " -lzstd")
endif ()
configure_file(${CMAKE_CURRENT_LIST_DIR}/opscope.pc.in ${CMAKE_BINARY_DIR}/packaging/opscope.pc
	@ONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/opscope.pc DESTINATION ${pc_dir})

# CMake package. Written by hand, not install(EXPORT): the in-tree targets carry source-tree
# include directories, which an export refuses; the imported targets here name the installed
# files, found from the config file's own location (PACKAGE_PREFIX_DIR).
set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/opscope)
set(OPSCOPE_SHARED_FILE
	${CMAKE_SHARED_LIBRARY_PREFIX}opscope${CMAKE_SHARED_LIBRARY_SUFFIX}.${OPSCOPE_LIB_VERSION})
set(OPSCOPE_STATIC_FILE ${CMAKE_STATIC_LIBRARY_PREFIX}opscope${CMAKE_STATIC_LIBRARY_SUFFIX})
set(OPSCOPE_STATIC_DEPS "Threads::Threads;${CMAKE_DL_LIBS};m")
if (OPSCOPE_HAVE_ZSTD)
	list(APPEND OPSCOPE_STATIC_DEPS zstd)
endif ()
set(OPSCOPE_INSTALL_LIBDIR ${CMAKE_INSTALL_LIBDIR})
set(OPSCOPE_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/opscopeConfig.cmake.in
	${CMAKE_BINARY_DIR}/packaging/opscopeConfig.cmake INSTALL_DESTINATION ${cmake_dir}
	PATH_VARS OPSCOPE_INSTALL_LIBDIR OPSCOPE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/packaging/opscopeConfigVersion.cmake
	VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/packaging/opscopeConfig.cmake
	${CMAKE_BINARY_DIR}/packaging/opscopeConfigVersion.cmake DESTINATION ${cmake_dir})

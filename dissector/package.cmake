# The Debian package of the plugin, made with CPack in a build tree:
#
#   cpack -G DEB                         (in the build tree), or
#   cmake --build <build> --target package
#
# writes <build>/chunkshark-wireshark-plugin_<version>_<arch>.deb for the
# Wireshark the build is made against. It holds the install components
# "plugin" (chunk.so in Wireshark's global plugin folder, <plugindir>/epan,
# e.g. /usr/lib/x86_64-linux-gnu/wireshark/plugins/4.0/epan) and "plugin-doc"
# (/usr/share/doc/chunkshark-wireshark-plugin: copyright, README.md.gz,
# changelog.gz) and "profile" (the chunkshark configuration profile as a
# global profile: /usr/share/wireshark/profiles/chunkshark), never the
# endpoints. Depends is what dpkg-shlibdeps
# (dpkg-dev; cpack finds the ELF files to give it with `file`) finds the
# plugin linked to: on Debian 12 libwireshark16, libwsutil14, libglib2.0-0,
# zlib1g, libc6.
#
# Included at the end of dissector/CMakeLists.txt (needs CHUNK_GLOBAL_PLUGIN_DIR,
# CHUNK_PLUGIN_DEST and WIRESHARK_* from there). Writes
# ${CMAKE_BINARY_DIR}/package.txt (key=value lines: the package's file name,
# the Debian package of the libwireshark the plugin links, the plugin folder)
# for scripts/test-package.sh and the install tests.

set(CHUNK_PACKAGE_NAME chunkshark-wireshark-plugin)
set(CHUNK_PACKAGE_MAINTAINER "chunkshark maintainers <maintainers@users.noreply.a-seed-535b04b8.example>"
  CACHE STRING "Maintainer field of the Debian package (Name <email>)")

# The Debian package that holds the libwireshark this build links (on
# Debian 12 libwireshark16, 13 libwireshark18): dpkg-query -S on the file
# behind pkg-config's libwireshark.so. Empty when dpkg does not know it
# (Wireshark built from source, not Debian): then no package can be made.
set(_chunk_libws_file "")
foreach(_lib ${WIRESHARK_LINK_LIBRARIES})
  if(_lib MATCHES "/libwireshark\\.so$")
    get_filename_component(_chunk_libws_file "${_lib}" REALPATH)
  endif()
endforeach()
set(CHUNK_LIBWIRESHARK_PACKAGE "")
set(CHUNK_LIBWIRESHARK_VERSION "")
find_program(CHUNK_DPKG_QUERY dpkg-query)
find_program(CHUNK_DPKG dpkg)
find_program(CHUNK_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(CHUNK_FILE file)
if(CHUNK_DPKG_QUERY AND _chunk_libws_file)
  execute_process(COMMAND ${CHUNK_DPKG_QUERY} -S "${_chunk_libws_file}"
    OUTPUT_VARIABLE _out ERROR_QUIET RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  # "libwireshark16:amd64: /usr/lib/x86_64-linux-gnu/libwireshark.so.16.0.17"
  if(_rc EQUAL 0 AND _out MATCHES "^([a-z0-9][a-z0-9+.-]*)(:[a-z0-9-]+)?: ")
    set(CHUNK_LIBWIRESHARK_PACKAGE ${CMAKE_MATCH_1})
    execute_process(COMMAND ${CHUNK_DPKG_QUERY} -W -f=\${Version} "${CMAKE_MATCH_1}${CMAKE_MATCH_2}"
      OUTPUT_VARIABLE CHUNK_LIBWIRESHARK_VERSION ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
endif()
set(CHUNK_DEB_ARCH "")
if(CHUNK_DPKG)
  execute_process(COMMAND ${CHUNK_DPKG} --print-architecture
    OUTPUT_VARIABLE CHUNK_DEB_ARCH ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(CHUNK_DEB_FILE "${CHUNK_PACKAGE_NAME}_${PROJECT_VERSION}_${CHUNK_DEB_ARCH}.deb")
if(CHUNK_LIBWIRESHARK_PACKAGE)
  message(STATUS "chunk plugin: Debian package ${CHUNK_DEB_FILE} (cpack -G DEB), for ${CHUNK_LIBWIRESHARK_PACKAGE} ${CHUNK_LIBWIRESHARK_VERSION}")
else()
  message(STATUS "chunk plugin: no Debian package can be made: dpkg does not know ${_chunk_libws_file}")
endif()
file(WRITE ${CMAKE_BINARY_DIR}/package.txt
  "deb=${CHUNK_DEB_FILE}\n"
  "name=${CHUNK_PACKAGE_NAME}\n"
  "libwireshark=${CHUNK_LIBWIRESHARK_PACKAGE}\n"
  "libwireshark_version=${CHUNK_LIBWIRESHARK_VERSION}\n"
  "plugin_dir=${CHUNK_GLOBAL_PLUGIN_DIR}\n"
  "wireshark=${CHUNK_WS_MAJOR_MINOR}\n")

# /usr/share/doc/<package>: copyright (machine-readable, uncompressed),
# README.md and changelog gzip -9n compressed, as Debian policy asks.
# Component plugin-doc, left out of a plain `cmake --install` (it is for the
# package only).
set(_chunk_doc ${CMAKE_CURRENT_BINARY_DIR}/package-doc)
string(TIMESTAMP CHUNK_PACKAGE_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/package/copyright ${_chunk_doc}/copyright COPYONLY)
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/package/changelog.in ${_chunk_doc}/changelog @ONLY)
find_program(CHUNK_GZIP gzip REQUIRED)
add_custom_command(
  OUTPUT ${_chunk_doc}/README.md.gz ${_chunk_doc}/changelog.gz
  COMMAND ${CHUNK_GZIP} -9n -c ${PROJECT_SOURCE_DIR}/README.md > ${_chunk_doc}/README.md.gz
  COMMAND ${CHUNK_GZIP} -9n -c ${_chunk_doc}/changelog > ${_chunk_doc}/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/README.md ${_chunk_doc}/changelog
  COMMENT "Compressing the package's README.md and changelog")
add_custom_target(chunk_plugin_doc ALL DEPENDS ${_chunk_doc}/README.md.gz ${_chunk_doc}/changelog.gz)
install(FILES ${_chunk_doc}/copyright ${_chunk_doc}/README.md.gz ${_chunk_doc}/changelog.gz
  DESTINATION /usr/share/doc/${CHUNK_PACKAGE_NAME}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  COMPONENT plugin-doc EXCLUDE_FROM_ALL)

# cpack checks, at package time, what only makes sense for a package.
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/package/cpack-checks.cmake.in
  ${CMAKE_BINARY_DIR}/cpack-checks.cmake @ONLY)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ${CHUNK_PACKAGE_NAME})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR chunkshark)
set(CPACK_PACKAGE_CONTACT "${CHUNK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "Wireshark dissector for Glenn Fiedler's game network protocols")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/COPYING)
# Only the plugin, its Debian docs and the profile: one package, not one per component.
set(CPACK_INSTALL_CMAKE_PROJECTS
  "${CMAKE_BINARY_DIR};${PROJECT_NAME};plugin;/"
  "${CMAKE_BINARY_DIR};${PROJECT_NAME};plugin-doc;/"
  "${CMAKE_BINARY_DIR};${PROJECT_NAME};profile;/")
# The plugin folder is an absolute path (Wireshark's, from pkg-config).
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_BINARY_DIR}/cpack-checks.cmake)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CHUNK_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: from the libraries the plugin links, as Debian's own packages do.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "wireshark | tshark")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The long description; the first line of the field is the summary above.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"A Wireshark and tshark plugin (chunk.so) that decodes and analyses the UDP
protocols of Glenn Fiedler's game networking articles, such as chunk (large
blocks sent as acked slices), packet fragmentation and reassembly, and
reliability headers of sequence, ack and ack bits.
.
It follows every transfer and connection: resends, acks, reassembly, loss,
RTT, stalls, with expert infos, statistics tables and a plain-language
diagnosis of why a transfer hangs.
.
Built for Wireshark ${CHUNK_WS_MAJOR_MINOR}; installs into its global plugin folder,
so wireshark and tshark load it for every user.")

# The install components and the package, tested without touching the
# system (DESTDIR, a private HOME): dissector/package/test-install.sh.
add_test(NAME package.install
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/package/test-install.sh ${CMAKE_BINARY_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/test-install)
set_tests_properties(package.install PROPERTIES TIMEOUT 600
  ENVIRONMENT "CHUNK_TEST_CC=${CMAKE_C_COMPILER};CHUNK_TEST_CFLAGS=${CMAKE_C_FLAGS};CHUNK_TEST_BUILD_TYPE=${CMAKE_BUILD_TYPE}")

# No source package: package_source would pack build trees along.
set(CPACK_SOURCE_GENERATOR "")
include(CPack)

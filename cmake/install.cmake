# `cmake --install build [--prefix /usr]` (DESTDIR works too): the binary, which holds the chat
# page; duet(1), written at build time from the binary's --help texts
# (packaging/make_manpage.sh); the systemd unit, its ExecStart pointing at the installed binary
# (so it is written at install time, when the prefix is known); and examples of the service's
# environment file and of nginx in front. Included by CMakeLists.txt after the duet target.
include(GNUInstallDirs)
install(TARGETS duet RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# The man page runs duet: a cross build makes it only with an emulator to run duet under.
if(CMAKE_CROSSCOMPILING AND NOT CMAKE_CROSSCOMPILING_EMULATOR)
  message(STATUS "duet(1) is not made: cross-compiling without CMAKE_CROSSCOMPILING_EMULATOR")
else()
  set(DUET_MANPAGE "${CMAKE_BINARY_DIR}/duet.1")
  add_custom_command(OUTPUT "${DUET_MANPAGE}"
    COMMAND bash "${CMAKE_SOURCE_DIR}/packaging/make_manpage.sh" "${DUET_MANPAGE}"
      "${PROJECT_VERSION}" ${CMAKE_CROSSCOMPILING_EMULATOR} "$<TARGET_FILE:duet>"
    DEPENDS duet "${CMAKE_SOURCE_DIR}/packaging/make_manpage.sh"
    COMMENT "duet(1) from duet --help")
  add_custom_target(duet_manpage ALL DEPENDS "${DUET_MANPAGE}")
  install(FILES "${DUET_MANPAGE}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
endif()

# systemd looks for units in /usr/lib/systemd/system and /usr/local/lib/systemd/system (and
# /etc/systemd/system); relative to the prefix unless given as an absolute path.
set(DUET_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING "where the systemd unit goes")
set(DUET_UNIT_TEMPLATE "${CMAKE_SOURCE_DIR}/packaging/systemd/duet.service.in")
set(DUET_UNIT_STAGED "${CMAKE_BINARY_DIR}/packaging/duet.service")
install(CODE "
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_BINDIR}\")
    set(DUET_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  else()
    set(DUET_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  endif()
  configure_file(\"${DUET_UNIT_TEMPLATE}\" \"${DUET_UNIT_STAGED}\" @ONLY)
  if(IS_ABSOLUTE \"${DUET_SYSTEMD_UNIT_DIR}\")
    set(unit_dir \"${DUET_SYSTEMD_UNIT_DIR}\")
  else()
    set(unit_dir \"\${CMAKE_INSTALL_PREFIX}/${DUET_SYSTEMD_UNIT_DIR}\")
  endif()
  file(INSTALL DESTINATION \"\${unit_dir}\" TYPE FILE FILES \"${DUET_UNIT_STAGED}\")
")
install(FILES "${CMAKE_SOURCE_DIR}/packaging/systemd/duet.env"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}/examples")
install(FILES "${CMAKE_SOURCE_DIR}/packaging/nginx/duet.conf.template"
  DESTINATION "${CMAKE_INSTALL_DOCDIR}/examples" RENAME nginx-duet.conf.template)

# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` and the Debian package (packaging/package.sh) put under the prefix
# besides the programs: presets and the demo's assets, the desktop entry, icons, AppStream
# metainfo, man pages made from each program's --help, and the package's documents. The
# installed studio finds the engine beside itself and the presets in ../share/wanstudio/configs.
include(GNUInstallDirs)
set(WS_PKG ${PROJECT_SOURCE_DIR}/packaging/debian)
set(WS_APP_ID io.github.wanstudio.WanStudio)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/wanstudio/configs)

if(WANSTUDIO_GUI)
  install(FILES ${WS_PKG}/${WS_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  install(FILES ${WS_PKG}/${WS_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  foreach(size 16 32 48 64 128)
    install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/hicolor/${size}x${size}/wanstudio.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endforeach()
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/wanstudio.png DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/256x256/apps)
  install(FILES ${PROJECT_SOURCE_DIR}/resources/icons/wanstudio.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

# Man pages from --help (help2man), gzipped as Debian wants; skipped with a note when help2man
# is missing (packaging/deps.sh installs it).
find_program(WS_HELP2MAN help2man)
find_program(WS_GZIP gzip)
set(WS_MAN_PROGRAMS wanstudio-engine)
set(WS_MAN_wanstudio-engine_NAME "the Wan Studio worker: training, VAE, sampling, parity and benchmarks")
if(WANSTUDIO_GUI)
  list(APPEND WS_MAN_PROGRAMS wanstudio)
  set(WS_MAN_wanstudio_NAME "desktop studio for training Wan 2.2 video models")
endif()
if(WS_HELP2MAN AND WS_GZIP)
  set(WS_MAN_PAGES)
  foreach(prog ${WS_MAN_PROGRAMS})
    set(page ${CMAKE_BINARY_DIR}/man/${prog}.1.gz)
    add_custom_command(
      OUTPUT ${page}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
      COMMAND ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen
              ${WS_HELP2MAN} --no-info --no-discard-stderr --section 1 --version-string ${PROJECT_VERSION} --name "${WS_MAN_${prog}_NAME}"
              --output ${CMAKE_BINARY_DIR}/man/${prog}.1 $<TARGET_FILE:${prog}>
      COMMAND ${WS_GZIP} -9nf ${CMAKE_BINARY_DIR}/man/${prog}.1
      DEPENDS ${prog}
      COMMENT "man page of ${prog}")
    list(APPEND WS_MAN_PAGES ${page})
  endforeach()
  add_custom_target(wanstudio_man ALL DEPENDS ${WS_MAN_PAGES})
  install(FILES ${WS_MAN_PAGES} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(STATUS "Wan Studio: help2man not found, no man pages (packaging/deps.sh installs it)")
endif()

# The package's documents: copyright and the changelog, gzipped (-n: reproducible).
set(WS_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/doc/changelog.gz)
add_custom_command(
  OUTPUT ${WS_CHANGELOG_GZ}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/doc
  COMMAND ${CMAKE_COMMAND} -E copy ${WS_PKG}/changelog ${CMAKE_BINARY_DIR}/doc/changelog
  COMMAND ${WS_GZIP} -9nf ${CMAKE_BINARY_DIR}/doc/changelog
  DEPENDS ${WS_PKG}/changelog)
add_custom_target(wanstudio_docs ALL DEPENDS ${WS_CHANGELOG_GZ})
install(FILES ${WS_PKG}/copyright ${WS_CHANGELOG_GZ} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/wanstudio)
# The documentation, offline (Help ▸ Documentation opens it): the README and the design notes.
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/wanstudio)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/wanstudio)

# CPack: `cpack -G DEB` in the build folder writes wanstudio_<version>_amd64.deb.
set(CPACK_PACKAGE_NAME wanstudio)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "Wan Studio developers <wanstudio@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "desktop studio for training Wan 2.2 video models")
set(CPACK_PACKAGE_DESCRIPTION "Wan Studio trains Wan 2.2 video models with an embedded LibTorch engine:
latent upsamplers against the frozen Wan2.2 VAE, and the high- and low-noise
DiT experts in one run with joint timestep routing. The studio curates
datasets, starts and watches runs, plays validation videos side by side and
compares checkpoints; wanstudio --batch runs the same jobs on servers.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the binaries (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/wanstudio/wanstudio")
# The SentencePiece module is dlopen'ed, so dpkg-shlibdeps sees its library through the module.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_SOURCE_IGNORE_FILES "/build/;/\\\\.git/")
include(CPack)

# What `pip install .` (scikit-build-core, pyproject.toml) installs, all of it
# inside the Python package, so that one folder holds Magneton wherever pip
# puts it and the lookups relative to the command find the rest
# (docs/install.md):
#   magneton/bin/magneton               the command (the console script `magneton` runs it)
#   magneton/lib/libmagneton_cupti.so   the injection library: the command's ../lib
#   magneton/rules/*.json               the rules: the command's ../rules
#   magneton/_torch*.so, _energy*.so    the extension modules
# The torch extension gets no path to torch's libraries: it is imported after
# torch, as torch extensions are (magneton/recorder.py), so it uses the torch
# of whichever environment imports it. Libraries that link CUPTI keep the
# CUDA toolkit's folder they were built against.

set(_pkg magneton)
install(TARGETS magneton RUNTIME DESTINATION ${_pkg}/bin)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/rules/ DESTINATION ${_pkg}/rules FILES_MATCHING PATTERN "*.json")
if(TARGET magneton_cupti)
  get_filename_component(_cupti_dir ${MAGNETON_CUPTI_LIBRARY} DIRECTORY)
  set_target_properties(magneton_cupti PROPERTIES INSTALL_RPATH ${_cupti_dir})
  install(TARGETS magneton_cupti LIBRARY DESTINATION ${_pkg}/lib)
endif()
foreach(module magneton_torch magneton_energy_py)
  if(TARGET ${module})
    # Built into the build tree, not the checkout's python/magneton, whose
    # modules belong to the development build (scripts/build.sh).
    set_target_properties(${module} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python)
    if(TARGET magneton_cupti AND module STREQUAL "magneton_torch")
      set_target_properties(${module} PROPERTIES INSTALL_RPATH ${_cupti_dir})
    endif()
    install(TARGETS ${module} LIBRARY DESTINATION ${_pkg})
  endif()
endforeach()

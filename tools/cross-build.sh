# Sourced by tools/build-aarch64.sh and tools/build-windows.sh: what every cross build
# of this tree configures the same way. Defines `jobs`, and `cross_flags` for cmake:
# RelWithDebInfo with line tables only (-g1), and ccache when it is there. With ccache,
# a clone elsewhere (CI's fresh one) reuses what this machine compiled before: paths
# are hashed relative to the clone, not as absolute paths.
jobs="$(nproc 2>/dev/null || echo 2)"
cross_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
             "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  cross_flags+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

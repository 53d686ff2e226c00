#!/bin/sh
# Runs bench/overhead with the loader showing both Tutti (from the build tree, or the
# installed one named by TUTTI_ICD) and the backend's own platform.
# Usage: bench/run-overhead.sh [overhead options]   (from the build directory)
set -e
. "$(dirname "$0")/both-loaders.sh"
# shellcheck disable=SC2086
env $both_loaders "$top_builddir/bench/overhead" "$@"

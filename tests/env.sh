# Sourced by every test (AM_TESTS_ENVIRONMENT): the ICD loader sees only the Tutti just
# built; PoCL's kernel cache lives in the build tree; no Tutti setting leaks in from outside.
OCL_ICD_VENDORS="$top_builddir/tests/vendors"
TUTTI_ICD="$top_builddir/tests/vendors/tutti.icd"
POCL_CACHE_DIR="$top_builddir/tests/pocl-cache"
export OCL_ICD_VENDORS TUTTI_ICD POCL_CACHE_DIR
unset TT_TEST_BACKEND TUTTI_DEBUG TUTTI_CHECK TUTTI_TRACE TUTTI_HOST TUTTI_OUTPUT TUTTI_HOST_PID TUTTI_DOMAINS TUTTI_STAGING TUTTI_BACKENDS TUTTI_BACKEND_VENDORS TUTTI_BACKEND_LIBS TUTTI_DEVICE_TYPE TUTTI_STATS TUTTI_AUTO_SPLIT TUTTI_LIBCLANG TUTTI_AGGREGATE
unset OCL_ICD_FILENAMES
mkdir -p "$POCL_CACHE_DIR"
# Every test command runs under a time limit: a hang is a failure, not a stuck CI.
# Exported: the test scripts run in shells of their own (a plain assignment here never reached
# them, and a hung job held the suite until CI's own limit).
TT_TIMEOUT="timeout -k 10 300"
export TT_TIMEOUT
# Open MPI 4.1 makes its session directory (TMPDIR/ompi.HOST.UID) racily: two jobs starting at
# the same moment (tests under make -j, or two suites at once) can fail with "orte_session_dir
# failed ... File exists" (seen once in 5 runs of the suite beside a second one). Each test's
# jobs get a directory of their own, removed when the test ends.
OMPI_MCA_orte_tmpdir_base=$(mktemp -d "${TMPDIR:-/tmp}/tutti-test.XXXXXX")
export OMPI_MCA_orte_tmpdir_base
trap 'rm -rf "$OMPI_MCA_orte_tmpdir_base"' EXIT

# Sourced by every test (AM_TESTS_ENVIRONMENT): the ICD loader sees only the Tutti just
# built; PoCL's kernel cache lives in the build tree; no Tutti setting leaks in from outside.
OCL_ICD_VENDORS="$top_builddir/tests/vendors"
TUTTI_ICD="$top_builddir/tests/vendors/tutti.icd"
POCL_CACHE_DIR="$top_builddir/tests/pocl-cache"
export OCL_ICD_VENDORS TUTTI_ICD POCL_CACHE_DIR
unset TT_TEST_BACKEND TUTTI_DEBUG TUTTI_CHECK TUTTI_TRACE TUTTI_HOST TUTTI_OUTPUT TUTTI_HOST_PID TUTTI_DOMAINS TUTTI_STAGING TUTTI_BACKENDS TUTTI_BACKEND_VENDORS TUTTI_BACKEND_LIBS TUTTI_DEVICE_TYPE TUTTI_STATS
unset OCL_ICD_FILENAMES
mkdir -p "$POCL_CACHE_DIR"
# Every test command runs under a time limit: a hang is a failure, not a stuck CI.
# Exported: the test scripts run in shells of their own (a plain assignment here never reached
# them, and a hung job held the suite until CI's own limit).
TT_TIMEOUT="timeout -k 10 300"
export TT_TIMEOUT

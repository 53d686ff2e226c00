#!/bin/sh
# Writes the man page tutti(7) on standard output from doc/environment.md, the one place the
# settings are described: its opening paragraph, then each row of its table of variables
# (| `NAME` | values | effect |) as an entry. Markdown's `code` becomes bold; the rest is
# escaped for roff.
#   tools/man-env.sh doc/environment.md VERSION > tutti.7
set -eu
src=$1
version=${2:-}
cat <<HEAD
.TH TUTTI 7 "" "Tutti $version" "Tutti"
.SH NAME
tutti \\- one OpenCL platform over an MPI job: its settings
.SH DESCRIPTION
Tutti is an OpenCL platform (an ICD) that shows an unmodified OpenCL program, started on
every rank of an MPI job by
.BR tutti-run (1),
every device of every rank as its own. It is set up by the environment variables below.
.SH ENVIRONMENT
HEAD
awk '
  # roff: a backslash doubled, a line starting with a dot or quote guarded, `x` in bold.
  function roff(s,   out, n, i, parts) {
    gsub(/\\/, "\\e", s)
    n = split(s, parts, "`")
    out = ""
    for (i = 1; i <= n; i++)
      out = out (i % 2 == 0 ? "\\fB" parts[i] "\\fR" : parts[i])
    sub(/^[.\047]/, "\\\\\\&&", out)
    return out
  }
  /^\| `TUTTI_|^\| `POCL_|^\| `OCL_/ {
    line = $0
    sub(/^\| */, "", line); sub(/ *\|$/, "", line)
    n = split(line, cell, / \| /)
    name = cell[1]; gsub(/`/, "", name)
    print ".TP"
    print ".B " name
    print "Values: " roff(cell[2]) "."
    print ".br"
    rest = cell[3]
    for (i = 4; i <= n; i++) rest = rest " | " cell[i]
    print roff(rest)
  }
' "$src"
cat <<TAIL
.SH FILES
.TP
.I /etc/OpenCL/vendors/tutti.icd
the vendor file through which the ICD loader finds Tutti
.SH SEE ALSO
.BR tutti-run (1),
.BR tutti-info (1),
.BR clinfo (1),
.BR mpirun (1).
The manual in the source tree's doc/ folder: cluster.md, split.md, spill.md, running.md.
TAIL

# Sourced by the test scripts that run a TAP-printing program several times (tests/api/agree.sh,
# tests/cluster/cluster.sh, tests/api/api-ranks.test). renumber OUT COUNT NOTE RC prints the program's
# "ok I - ..." lines of groups 1..COUNT found in OUT (anywhere in a line; a "not ok" of any
# rank wins), numbered on from $n (which it advances), with NOTE added inside each line's
# closing parenthesis; a group that printed nothing is "not ok", with the exit status RC.
renumber() {
  # A line may follow another rank's output on the same line (ranks write to one console
  # under --output=all, and a compiler's message has come without its line's end first).
  lines=$(echo "$1" | grep -oE '(not )?ok [0-9]+ - .*')
  i=1
  while [ "$i" -le "$2" ]; do
    n=$((n + 1))
    # "not ok" sorts first: a group that failed on any rank (tutti-run shows the lines of
    # ranks whose output differs from rank 0's) is not ok.
    line=$(echo "$lines" | grep -E "^(not )?ok $i - " | sort | head -n 1)
    if [ -z "$line" ]; then
      echo "not ok $n - group $i did not report ($3, exit $4)"
    else
      echo "$line" | sed "s/ok $i - /ok $n - /; s/)\$/, $3)/"
    fi
    i=$((i + 1))
  done
}

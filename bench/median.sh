# shellcheck shell=sh
# Sourced by the benchmark scripts. median: the median of the numbers on standard input (one
# or several per line, blanks between), the mean of the middle two for an even count.
median() {
  tr -s ' \t' '\n' | sed '/^$/d' | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

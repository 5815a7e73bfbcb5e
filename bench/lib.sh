# Shared by the bench/ scripts (sourced): small helpers for side-by-side timings.

# The median of the numbers in FILE, one a line.
median() { sort -g "$1" | awk '{ v[NR] = $1 } END {
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

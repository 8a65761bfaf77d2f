# ffnroof serving frontier: output tokens/s per device against one user's tokens/s, each
# device's simulated layouts and concurrencies (faint), the frontier through the best of them
# and the pick at the interactivity asked for (large marker).
# Template plots/pareto.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot pareto.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"

set encoding utf8
set title "@TITLE@" font ",13"
set xrange @XRANGE@
set yrange @YRANGE@
set xlabel "Interactivity: tokens/s per user (1 / median TPOT)"
set ylabel "Throughput: output tokens/s per device"
set format x "%g"
set format y "%g"
set grid xtics ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
set key outside right top vertical Left reverse samplen 3 spacing 1.2 font ",10"

# One colour per device (Okabe-Ito, differing in lightness: survives greyscale printing).
set linetype 1 lc rgb "#000000" lw 2 pt 7 ps 1.3
set linetype 2 lc rgb "#0072B2" lw 2 pt 5 ps 1.3
set linetype 3 lc rgb "#D55E00" lw 2 pt 9 ps 1.5
set linetype 4 lc rgb "#009E73" lw 2 pt 11 ps 1.5
set linetype 5 lc rgb "#CC79A7" lw 2 pt 13 ps 1.5
set linetype 6 lc rgb "#E69F00" lw 2 pt 15 ps 1.5
set linetype cycle 6
@SETUP@

set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
set output png_file
@PLOT@
set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

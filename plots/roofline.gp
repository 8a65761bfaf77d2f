# ffnroof roofline chart: log-log arithmetic intensity (FLOP/byte) vs performance (FLOP/s).
# Template plots/roofline.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot roofline.gp` in that folder (docs/reports.md).
# The data file holds gnuplot index blocks; the comment before each block says what it is.
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"

set encoding utf8
set title "@TITLE@" font ",13"
set logscale xy 10
set xrange @XRANGE@
set yrange @YRANGE@
set xlabel "Arithmetic intensity (FLOP/byte)"
set ylabel "Performance (FLOP/s)"
set format x "%g"
set format y "%.0s %c"
set mxtics 10
set mytics 10
set grid xtics ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
# The legend sits right of the plot area so it never covers a ceiling or a point; ffnroof fixes
# the plot area's margins and the legend's place (below, before the plot command) because it
# places the point labels for that area.
set key vertical Left reverse samplen 3 spacing 1.2 font ",10"

# One colour per ceiling: every compute roof and every memory level its own (the same name shares
# a colour across devices), from the Okabe-Ito and Tol palettes; ffnroof picks line type N for
# the Nth name. Devices differ by dash pattern (solid, dashed, dash-dotted, ...) and by point
# shape; read-write roofs are dotted. The legend names each ceiling with its value.
set linetype 1 lc rgb "#0072B2" lw 2
set linetype 2 lc rgb "#D55E00" lw 2
set linetype 3 lc rgb "#009E73" lw 2
set linetype 4 lc rgb "#CC79A7" lw 2
set linetype 5 lc rgb "#E69F00" lw 2
set linetype 6 lc rgb "#56B4E9" lw 2
set linetype 7 lc rgb "#882255" lw 2
set linetype 8 lc rgb "#999933" lw 2
set linetype 9 lc rgb "#332288" lw 2
set linetype 10 lc rgb "#44AA99" lw 2
set linetype 11 lc rgb "#AA4499" lw 2
set linetype 12 lc rgb "#661100" lw 2
set linetype cycle 12
# Kernel points (measured filled, predicted open), their labels, and the line joining each pair.
point_colour = "#000000"
pair_colour = "#808080"
@SETUP@

set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
set output png_file
@PLOT@
set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

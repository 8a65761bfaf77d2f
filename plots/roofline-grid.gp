# ffnroof roofline chart as small multiples: one log-log panel per device, arithmetic intensity
# (FLOP/byte) vs performance (FLOP/s), every panel on the same axes. Template
# plots/roofline-grid.gp (ffnroof uses it from five devices on; fewer share plots/roofline.gp);
# ffnroof fills the @...@ fields and writes the result beside its data file. Restyle freely, then
# re-run `gnuplot roofline.gp` in that folder (docs/reports.md). The data file holds gnuplot
# index blocks; the comment before each block says what it is.
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"
chart_title = "@TITLE@"

set encoding utf8
set logscale xy 10
# One range for every panel, so that the panels compare at a glance: no panel sets its own.
set xrange @XRANGE@
set yrange @YRANGE@
unset xlabel
unset ylabel
# Tick labels stand on the outer panels only (ffnroof sets each panel's format to these or "").
xtic_format = "%g"
ytic_format = "%.0s %c"
set mxtics 10
set mytics 10
set grid xtics ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out scale 0.7 font ",9"
unset key

# The same colours in every panel: the panel says which device, the colour which kind of line.
# The roofs' values are in each panel's title, so no text sits on the lines.
compute_colour = "#0072B2"
memory_colour = "#D55E00"
# Kernel points (measured filled, predicted open), their labels, and the line joining each pair.
point_colour = "#000000"
pair_colour = "#808080"
@SETUP@

# A multiplot is not replotted: the grid is drawn once per image.
do for [image = 1:2] {
    if (image == 1) {
        set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
        set output png_file
    } else {
        set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
        set output svg_file
    }
@PLOT@
}
unset output

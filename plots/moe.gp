# ffnroof MoE chart: where the time of one MoE layer goes on the busiest device, per batch or EP
# degree, in two panels over the same bars: above, each part's share of the layer (router,
# dispatch, experts, shared experts, combine, all-to-all) stacked to 100% on a linear axis, so a
# part's height is its share; below, the layer's total time on a log axis, so that devices 1000x
# apart all show.
# Template plots/moe.gp; ffnroof fills the @...@ fields and writes the result beside its data
# file. Restyle freely, then re-run `gnuplot moe.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"

set encoding utf8
chart_title = "@TITLE@"
x_label = "@XLABEL@"
total_range = "@YRANGE@"
set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
set key outside right top vertical Left reverse samplen 2 spacing 1.3 font ",10"
set style fill solid 1.0 border lc rgb "#000000"

# Each part has a colour of its own lightness AND (every other part) a hatch pattern, so the
# parts read in greyscale too. The plot commands use these as macros (@router_style).
router_style   = "fs solid 1.0 border lc rgb '#000000' lc rgb '#000000'"
dispatch_style = "fs pattern 4 border lc rgb '#000000' lc rgb '#0072B2'"
experts_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#E69F00'"
shared_style   = "fs pattern 5 border lc rgb '#000000' lc rgb '#009E73'"
combine_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#56B4E9'"
alltoall_style = "fs pattern 2 border lc rgb '#000000' lc rgb '#D55E00'"
# The total: one bar per layer, its value written above it where there is room.
bar_width = 0.8
total_style = "fs solid 0.35 border lc rgb '#333333' lc rgb '#666666'"
total_label_style = "offset 0,0.7 font ',9' tc rgb '#000000'"
@SETUP@

set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
set output png_file
@PLOT@
set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
set output svg_file
@PLOT@
unset output

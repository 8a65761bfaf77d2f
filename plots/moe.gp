# ffnroof MoE chart: where the time of one MoE layer goes on the busiest device, per batch or EP
# degree: one bar per part (router, dispatch, experts, shared experts, combine, all-to-all) side
# by side on a log axis, so that devices 1000x apart all show, inside an outline of the layer's
# total, which is written above it.
# Template plots/moe.gp; ffnroof fills the @...@ fields and writes the result beside its data
# file. Restyle freely, then re-run `gnuplot moe.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"

set encoding utf8
set title "@TITLE@" font ",13"
set xlabel "@XLABEL@"
set ylabel "Time per MoE layer (s)"
set logscale y 10
set yrange @YRANGE@
set format y "%.0s %cs"
set mytics 10
set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
set xtics rotate by -30 left
set key outside right top vertical Left reverse samplen 2 spacing 1.3 font ",10"
set style data histograms
set style histogram clustered gap 1

# Each part has a colour of its own lightness AND (every other part) a hatch pattern, so the
# parts read in greyscale too. The plot command below uses these as macros (@router_style).
router_style   = "fs solid 1.0 border lc rgb '#000000' lc rgb '#000000'"
dispatch_style = "fs pattern 4 border lc rgb '#000000' lc rgb '#0072B2'"
experts_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#E69F00'"
shared_style   = "fs pattern 5 border lc rgb '#000000' lc rgb '#009E73'"
combine_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#56B4E9'"
alltoall_style = "fs pattern 2 border lc rgb '#000000' lc rgb '#D55E00'"
# The total: an outline around each bar's parts (bar_width: the share of its slot) and its value.
bar_width = 0.92
total_style = "fs empty border lc rgb '#666666' lw 1.5 lc rgb '#666666'"
total_label_style = "offset 0,0.7 font ',9' tc rgb '#000000'"
@SETUP@

set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
set output png_file
@PLOT@
set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

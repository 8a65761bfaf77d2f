# ffnroof MoE chart: where the time of one MoE layer goes on the busiest device, as stacked
# bars (router, dispatch, experts, shared experts, combine, all-to-all) per batch or EP degree.
# Template plots/moe.gp; ffnroof fills the @...@ fields and writes the result beside its data
# file. Restyle freely, then re-run `gnuplot moe.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "@PNG@"
if (!exists("svg_file")) svg_file = "@SVG@"
datafile = "@DATA@"

set encoding utf8
set title "@TITLE@" font ",13"
set xlabel "@XLABEL@"
set ylabel "Time per MoE layer (s)"
set yrange @YRANGE@
set format y "%.1s %cs"
set grid ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
set xtics rotate by -30 left
set key outside right top vertical Left reverse invert samplen 2 spacing 1.3 font ",10"
set style data histograms
set style histogram rowstacked
set boxwidth 0.7 relative

# Each part has a colour of its own lightness AND (every other part) a hatch pattern, so the
# stack reads in greyscale too. The plot command below uses these as macros (@router_style).
router_style   = "fs solid 1.0 border lc rgb '#000000' lc rgb '#000000'"
dispatch_style = "fs pattern 4 border lc rgb '#000000' lc rgb '#0072B2'"
experts_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#E69F00'"
shared_style   = "fs pattern 5 border lc rgb '#000000' lc rgb '#009E73'"
combine_style  = "fs solid 1.0 border lc rgb '#000000' lc rgb '#56B4E9'"
alltoall_style = "fs pattern 2 border lc rgb '#000000' lc rgb '#D55E00'"
@SETUP@

set terminal @PNGTERM@ noenhanced size @WIDTH@,@HEIGHT@ font ",11"
set output png_file
@PLOT@
set terminal svg noenhanced size @WIDTH@,@HEIGHT@ font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

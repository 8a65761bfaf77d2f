# ffnroof MoE chart: where the time of one MoE layer goes on the busiest device, per batch or EP
# degree: one bar per part (router, dispatch, experts, shared experts, combine, all-to-all) side
# by side on a log axis, so that devices 1000x apart all show, inside an outline of the layer's
# total, which is written above it.
# Template plots/moe.gp; ffnroof fills the @...@ fields and writes the result beside its data
# file. Restyle freely, then re-run `gnuplot moe.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "t.png"
if (!exists("svg_file")) svg_file = "t.svg"
datafile = "t.dat"

set encoding utf8
set title "MoE layer time: test (2025-01-31)" font ",13"
set xlabel "expert-parallel degree"
set ylabel "Time per MoE layer (s)"
set logscale y 10
set yrange [1e-07:0.001]
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


set terminal pngcairo noenhanced size 800,600 font ",11"
set output png_file
plot datafile index 0 using ($2 > 0 ? $2 : NaN):xtic(1) @router_style title "router", \
     datafile index 0 using ($3 > 0 ? $3 : NaN) @dispatch_style title "dispatch", \
     datafile index 0 using ($4 > 0 ? $4 : NaN) @experts_style title "routed experts", \
     datafile index 0 using ($6 > 0 ? $6 : NaN) @combine_style title "combine", \
     datafile index 0 using ($7 > 0 ? $7 : NaN) @alltoall_style title "all-to-all (EP)", \
     datafile index 0 using 0:8:(bar_width) with boxes @total_style title "layer total", \
     datafile index 0 using 0:8:9 with labels @total_label_style notitle

set terminal svg noenhanced size 800,600 font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

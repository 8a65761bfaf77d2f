# ffnroof MoE chart: where the time of one MoE layer goes on the busiest device, per batch or EP
# degree, in two panels over the same bars: above, each part's share of the layer (router,
# dispatch, experts, shared experts, combine, all-to-all) stacked to 100% on a linear axis, so a
# part's height is its share; below, the layer's total time on a log axis, so that devices 1000x
# apart all show.
# Template plots/moe.gp; ffnroof fills the @...@ fields and writes the result beside its data
# file. Restyle freely, then re-run `gnuplot moe.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "t.png"
if (!exists("svg_file")) svg_file = "t.svg"
datafile = "t.dat"

set encoding utf8
chart_title = "MoE layer time: test (2025-01-31)"
x_label = "expert-parallel degree"
total_range = "[1e-07:0.001]"
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


set terminal pngcairo noenhanced size 800,600 font ",11"
set output png_file
set multiplot title chart_title font ",13"
set lmargin at screen 0.09
set rmargin at screen 0.80
set tmargin at screen 0.90
set bmargin at screen 0.52
set xrange [-0.7:2.7]
unset logscale y
set yrange [0:100]
set ylabel "share of the layer (%)"
set format y "%g%%"
set ytics 20
unset mytics
set xtics format ""
unset xlabel
plot datafile index 0 using 10:17:(bar_width) with boxes @alltoall_style title "all-to-all (EP)", \
     datafile index 0 using 10:16:(bar_width) with boxes @combine_style title "combine", \
     datafile index 0 using 10:14:(bar_width) with boxes @experts_style title "routed experts", \
     datafile index 0 using 10:13:(bar_width) with boxes @dispatch_style title "dispatch", \
     datafile index 0 using 10:12:(bar_width) with boxes @router_style title "router"
set tmargin at screen 0.46
set bmargin at screen 0.12
unset title
set logscale y 10
set yrange [1e-07:0.001]
set ytics auto
set mytics 10
set format y "%.0s %cs"
set ylabel "layer time"
set xtics rotate by -30 left format "%g"
set xlabel x_label
plot datafile index 0 using 10:8:(bar_width):xtic(11) with boxes @total_style title "layer total", \
     datafile index 0 using 10:8:9 with labels @total_label_style notitle
unset multiplot

set terminal svg noenhanced size 800,600 font ",11" dynamic background rgb "white"
set output svg_file
set multiplot title chart_title font ",13"
set lmargin at screen 0.09
set rmargin at screen 0.80
set tmargin at screen 0.90
set bmargin at screen 0.52
set xrange [-0.7:2.7]
unset logscale y
set yrange [0:100]
set ylabel "share of the layer (%)"
set format y "%g%%"
set ytics 20
unset mytics
set xtics format ""
unset xlabel
plot datafile index 0 using 10:17:(bar_width) with boxes @alltoall_style title "all-to-all (EP)", \
     datafile index 0 using 10:16:(bar_width) with boxes @combine_style title "combine", \
     datafile index 0 using 10:14:(bar_width) with boxes @experts_style title "routed experts", \
     datafile index 0 using 10:13:(bar_width) with boxes @dispatch_style title "dispatch", \
     datafile index 0 using 10:12:(bar_width) with boxes @router_style title "router"
set tmargin at screen 0.46
set bmargin at screen 0.12
unset title
set logscale y 10
set yrange [1e-07:0.001]
set ytics auto
set mytics 10
set format y "%.0s %cs"
set ylabel "layer time"
set xtics rotate by -30 left format "%g"
set xlabel x_label
plot datafile index 0 using 10:8:(bar_width):xtic(11) with boxes @total_style title "layer total", \
     datafile index 0 using 10:8:9 with labels @total_label_style notitle
unset multiplot

unset output

# ffnroof roofline chart: log-log arithmetic intensity (FLOP/byte) vs performance (FLOP/s).
# Template plots/roofline.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot roofline.gp` in that folder (docs/reports.md).
# The data file holds gnuplot index blocks; the comment before each block says what it is.
if (!exists("png_file")) png_file = "roofline.png"
if (!exists("svg_file")) svg_file = "roofline.svg"
datafile = "roofline.dat"

set encoding utf8
set title "Roofline: llama2-7b on calibrated-vm, xeon-8480, h100-sxm, mi300x, bf16 (2026-12-06)" font ",13"
set logscale xy 10
set xrange [0.01:10000]
set yrange [1e+08:1e+16]
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
# the plot area, fixed: ffnroof placed the point labels for it
set lmargin at screen 0.0750
set rmargin at screen 0.6897
set bmargin at screen 0.0875
set tmargin at screen 0.9437
set key at screen 0.6963, screen 0.9437 left top


set terminal pngcairo noenhanced size 1200,800 font ",11"
set output png_file
plot keyentry with points pt 7 ps 1.3 lt 1 title "calibrated-vm", \
     datafile index 0 with lines lt 1 lw 2.5 dt 1 title "  bf16 6.89 TFLOP/s, ridge 234 FLOP/B", \
     datafile index 1 with lines lt 1 lw 2 dt 2 title "  memory 29.5 GB/s, read-only", \
     datafile index 2 using 1:2 with points pt 6 ps 1.4 lt 1 title "  predicted", \
     keyentry with points pt 7 ps 1.3 lt 2 title "xeon-8480", \
     datafile index 3 with lines lt 2 lw 2.5 dt 1 title "  bf16 115 TFLOP/s, ridge 373 FLOP/B", \
     datafile index 4 with lines lt 2 lw 2 dt 2 title "  DRAM 307 GB/s, datasheet peak", \
     datafile index 5 using 1:2 with points pt 6 ps 1.4 lt 2 title "  predicted", \
     keyentry with points pt 7 ps 1.3 lt 3 title "h100-sxm", \
     datafile index 6 with lines lt 3 lw 2.5 dt 1 title "  bf16/fp16 989 TFLOP/s, ridge 295 FLOP/B", \
     datafile index 7 with lines lt 3 lw 2 dt 2 title "  HBM 3.35 TB/s, datasheet peak", \
     datafile index 8 using 1:2 with points pt 6 ps 1.4 lt 3 title "  predicted", \
     keyentry with points pt 7 ps 1.3 lt 4 title "mi300x", \
     datafile index 9 with lines lt 4 lw 2.5 dt 1 title "  bf16/fp16 1.31 PFLOP/s, ridge 247 FLOP/B", \
     datafile index 10 with lines lt 4 lw 2 dt 2 title "  HBM 5.30 TB/s, datasheet peak", \
     datafile index 11 using 1:2 with points pt 6 ps 1.4 lt 4 title "  predicted", \
     datafile index 12 using 1:2:3 with labels left font ",8" tc rgb point_colour notitle, \
     datafile index 13 using 1:2:3 with points pt 12 ps 2 lw 1.5 lc variable title "ridge points (against main memory)", \
     datafile index 14 using 1:2:3 with points pt 12 ps 2 lw 1.5 lc variable notitle, \
     datafile index 15 using 1:2:3 with points pt 12 ps 2 lw 1.5 lc variable notitle, \
     datafile index 16 using 1:2:3 with points pt 12 ps 2 lw 1.5 lc variable notitle

set terminal svg noenhanced size 1200,800 font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

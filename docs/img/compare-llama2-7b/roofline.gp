# ffnroof roofline chart: log-log arithmetic intensity (FLOP/byte) vs performance (FLOP/s).
# Template plots/roofline.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot roofline.gp` in that folder (docs/reports.md).
# The data file holds gnuplot index blocks; the comment before each block says what it is.
if (!exists("png_file")) png_file = "roofline.png"
if (!exists("svg_file")) svg_file = "roofline.svg"
datafile = "roofline.dat"

set encoding utf8
set title "Roofline: llama2-7b on calibrated-vm, xeon-8480, h100-sxm, mi300x, bf16 (2026-11-30)" font ",13"
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
# The legend sits outside the plot area so it never covers a ceiling or a point.
set key outside right top vertical Left reverse samplen 3 spacing 1.2 font ",10"

# One colour per device, chosen from the Okabe-Ito palette to differ in lightness so that the
# devices stay apart when printed in grey; each device also gets its own point shape.
# Compute, read-only and datasheet roofs are solid (the legend says which), read-write dashed.
set linetype 1 lc rgb "#000000" lw 2 pt 7 ps 1.3
set linetype 2 lc rgb "#0072B2" lw 2 pt 5 ps 1.3
set linetype 3 lc rgb "#D55E00" lw 2 pt 9 ps 1.5
set linetype 4 lc rgb "#009E73" lw 2 pt 11 ps 1.5
set linetype 5 lc rgb "#CC79A7" lw 2 pt 13 ps 1.5
set linetype 6 lc rgb "#E69F00" lw 2 pt 15 ps 1.5
set linetype cycle 6


set terminal pngcairo noenhanced size 1200,800 font ",11"
set output png_file
plot datafile index 0 with lines lt 1 lw 2.5 dt 1 title "calibrated-vm compute", \
     datafile index 1 with lines lt 1 lw 2 dt 1 title "calibrated-vm bandwidth, read-only", \
     datafile index 2 using 1:2:3 with labels right font ",9" tc lt 1 notitle, \
     datafile index 3 using 1:2:3 with labels left font ",9" tc lt 1 notitle, \
     datafile index 4 using 1:2 with points lt 1 pt 12 ps 2 title "calibrated-vm ridge points", \
     datafile index 5 using 1:2 with points lt 1 pt 6 ps 1.4 title "calibrated-vm predicted", \
     datafile index 5 using 1:2:3 with labels left offset 0.8,0.3 font ",8" tc lt 1 notitle, \
     datafile index 6 with lines lt 2 lw 2.5 dt 1 title "xeon-8480 compute", \
     datafile index 7 with lines lt 2 lw 2 dt 1 title "xeon-8480 bandwidth, datasheet peak", \
     datafile index 8 using 1:2:3 with labels right font ",9" tc lt 2 notitle, \
     datafile index 9 using 1:2:3 with labels left font ",9" tc lt 2 notitle, \
     datafile index 10 using 1:2 with points lt 2 pt 12 ps 2 title "xeon-8480 ridge points", \
     datafile index 11 using 1:2 with points lt 2 pt 6 ps 1.4 title "xeon-8480 predicted", \
     datafile index 11 using 1:2:3 with labels left offset 0.8,0.3 font ",8" tc lt 2 notitle, \
     datafile index 12 with lines lt 3 lw 2.5 dt 1 title "h100-sxm compute", \
     datafile index 13 with lines lt 3 lw 2 dt 1 title "h100-sxm bandwidth, datasheet peak", \
     datafile index 14 using 1:2:3 with labels right font ",9" tc lt 3 notitle, \
     datafile index 15 using 1:2:3 with labels left font ",9" tc lt 3 notitle, \
     datafile index 16 using 1:2 with points lt 3 pt 12 ps 2 title "h100-sxm ridge points", \
     datafile index 17 using 1:2 with points lt 3 pt 6 ps 1.4 title "h100-sxm predicted", \
     datafile index 17 using 1:2:3 with labels left offset 0.8,0.3 font ",8" tc lt 3 notitle, \
     datafile index 18 with lines lt 4 lw 2.5 dt 1 title "mi300x compute", \
     datafile index 19 with lines lt 4 lw 2 dt 1 title "mi300x bandwidth, datasheet peak", \
     datafile index 20 using 1:2:3 with labels right font ",9" tc lt 4 notitle, \
     datafile index 21 using 1:2:3 with labels left font ",9" tc lt 4 notitle, \
     datafile index 22 using 1:2 with points lt 4 pt 12 ps 2 title "mi300x ridge points", \
     datafile index 23 using 1:2 with points lt 4 pt 6 ps 1.4 title "mi300x predicted", \
     datafile index 23 using 1:2:3 with labels left offset 0.8,0.3 font ",8" tc lt 4 notitle

set terminal svg noenhanced size 1200,800 font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

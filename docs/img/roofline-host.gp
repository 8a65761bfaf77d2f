# ffnroof roofline chart: log-log arithmetic intensity (FLOP/byte) vs performance (FLOP/s).
# Template plots/roofline.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot roofline.gp` in that folder (docs/reports.md).
# The data file holds gnuplot index blocks; the comment before each block says what it is.
if (!exists("png_file")) png_file = "roofline-host.png"
if (!exists("svg_file")) svg_file = "roofline-host.svg"
datafile = "roofline-host.dat"

set encoding utf8
set title "Roofline: vm (2026-11-30)" font ",13"
set logscale xy 10
set xrange [0.001:10000]
set yrange [1e+07:1e+14]
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
plot datafile index 0 with lines lt 1 lw 2.5 dt 1 title "vm compute", \
     datafile index 1 with lines lt 1 lw 2 dt 1 title "vm bandwidth, read-only", \
     datafile index 2 with lines lt 1 lw 2 dt 2 title "vm bandwidth, read-write", \
     datafile index 3 using 1:2:3 with labels right font ",9" tc lt 1 notitle, \
     datafile index 4 using 1:2:3 with labels left font ",9" tc lt 1 notitle, \
     datafile index 5 using 1:2 with points lt 1 pt 12 ps 2 title "vm ridge points", \
     datafile index 6 using 1:2 with points lt 1 pt 7 ps 1.2 title "vm measured", \
     datafile index 6 using 1:2:3 with labels left offset 0.8,0.3 font ",8" tc lt 1 notitle, \
     datafile index 7 using 1:2 with points lt 1 pt 6 ps 1.4 title "vm predicted", \
     datafile index 8 with lines lt 1 lw 0.8 dt 3 notitle

set terminal svg noenhanced size 1200,800 font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

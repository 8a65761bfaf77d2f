# ffnroof FFN latency chart: time per FFN layer vs tokens per step, log-log, prefill and
# decode, predicted (lines) and measured (points), each device's ridge point marked.
# Template plots/latency.gp; ffnroof fills the @...@ fields and writes the result beside its
# data file. Restyle freely, then re-run `gnuplot latency.gp` in that folder (docs/reports.md).
if (!exists("png_file")) png_file = "latency.png"
if (!exists("svg_file")) svg_file = "latency.svg"
datafile = "latency.dat"

set encoding utf8
set title "FFN latency per layer: llama2-7b on calibrated-vm, xeon-8480, h100-sxm, mi300x, bf16 (2026-12-06)" font ",13"
set logscale xy 10
set xrange [0.1:100000]
set yrange [1e-05:10]
set xlabel "Tokens per step (decode: batch; prefill: batch x prompt)"
set ylabel "FFN time per layer (s)"
set format x "%g"
set format y "%.0s %cs"
set mxtics 10
set mytics 10
set grid xtics ytics lc rgb "#d0d0d0" lw 1 dt 1
set border 3 lw 1.2
set tics nomirror out
set key outside right top vertical Left reverse samplen 3 spacing 1.2 font ",10"

# One colour per device (Okabe-Ito, differing in lightness: survives greyscale printing).
# Prefill is solid, decode dashed; measured points are filled, predicted ones open.
set linetype 1 lc rgb "#000000" lw 2 pt 7 ps 1.3
set linetype 2 lc rgb "#0072B2" lw 2 pt 5 ps 1.3
set linetype 3 lc rgb "#D55E00" lw 2 pt 9 ps 1.5
set linetype 4 lc rgb "#009E73" lw 2 pt 11 ps 1.5
set linetype 5 lc rgb "#CC79A7" lw 2 pt 13 ps 1.5
set linetype 6 lc rgb "#E69F00" lw 2 pt 15 ps 1.5
set linetype cycle 6


set terminal pngcairo noenhanced size 1200,800 font ",11"
set output png_file
plot datafile index 0 with linespoints lt 1 dt 1 pt 6 ps 0.9 title "calibrated-vm prefill", \
     datafile index 1 with linespoints lt 1 dt 2 pt 8 ps 0.9 title "calibrated-vm decode", \
     datafile index 2 with linespoints lt 2 dt 1 pt 6 ps 0.9 title "xeon-8480 prefill", \
     datafile index 3 with linespoints lt 2 dt 2 pt 8 ps 0.9 title "xeon-8480 decode", \
     datafile index 4 with linespoints lt 3 dt 1 pt 6 ps 0.9 title "h100-sxm prefill", \
     datafile index 5 with linespoints lt 3 dt 2 pt 8 ps 0.9 title "h100-sxm decode", \
     datafile index 6 with linespoints lt 4 dt 1 pt 6 ps 0.9 title "mi300x prefill", \
     datafile index 7 with linespoints lt 4 dt 2 pt 8 ps 0.9 title "mi300x decode", \
     datafile index 8 with lines lt 1 lw 1.2 dt 4 title "calibrated-vm ridge (247 tokens)", \
     datafile index 9 with lines lt 2 lw 1.2 dt 4 title "xeon-8480 ridge (408 tokens)", \
     datafile index 10 with lines lt 3 lw 1.2 dt 4 title "h100-sxm ridge (317 tokens)", \
     datafile index 11 with lines lt 4 lw 1.2 dt 4 title "mi300x ridge (262 tokens)"

set terminal svg noenhanced size 1200,800 font ",11" dynamic background rgb "white"
set output svg_file
replot
unset output

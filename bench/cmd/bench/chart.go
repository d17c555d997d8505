package main

import (
	"fmt"
	"os"

	"github.com/agnara-go/agnara/bench/load"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chart draws, for the echo workload, one row per era and two panels per row, req/s and server CPU
// µs per call, each with one group of bars per concurrency and one bar per
// server, and writes it as a PNG.
func (rep *Report) chart(path string) error {
	m := rep.Meta
	metrics := []struct {
		title string
		value func(Summary) float64
	}{
		{"throughput (req/s, higher is better)", func(s Summary) float64 { return s.ReqPerSec }},
		{"server CPU per call (µs, lower is better)", func(s Summary) float64 { return s.CPUPerCallUs }},
	}
	groups := make([]string, len(m.Concurrency))
	for i, c := range m.Concurrency {
		groups[i] = fmt.Sprintf("c=%d", c)
	}
	width := vg.Points(18)
	plots := make([][]*plot.Plot, len(m.Eras))
	for i, era := range m.Eras {
		plots[i] = make([]*plot.Plot, len(metrics))
		for j, metric := range metrics {
			p := plot.New()
			p.Title.Text = era + ": " + metric.title
			p.Legend.Top = true
			p.Legend.Left = true
			p.NominalX(groups...)
			top := 0.0
			for k, server := range m.Servers {
				vals := make(plotter.Values, len(m.Concurrency))
				for g, c := range m.Concurrency {
					for _, s := range rep.Summary {
						if s.Workload == load.Echo && s.Era == era && s.Concurrency == c && s.Server == server {
							vals[g] = metric.value(s)
							top = max(top, vals[g])
						}
					}
				}
				bars, err := plotter.NewBarChart(vals, width)
				if err != nil {
					return err
				}
				bars.LineStyle.Width = 0
				bars.Color = plotutil.Color(k)
				bars.Offset = width * vg.Length(2*k-len(m.Servers)+1) / 2
				p.Add(bars)
				p.Legend.Add(server, bars)
			}
			grid := plotter.NewGrid()
			grid.Vertical.Color = nil
			p.Add(grid)
			// Room for the bars at both ends and for the legend above them.
			p.X.Min, p.X.Max = -0.5, float64(len(groups))-0.5
			p.Y.Min, p.Y.Max = 0, top*1.35
			plots[i][j] = p
		}
	}
	img := vgimg.New(vg.Points(1000), vg.Points(330*float64(len(m.Eras))))
	dc := draw.New(img)
	tiles := draw.Tiles{
		Rows: len(m.Eras), Cols: len(metrics),
		PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2,
	}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

//go:build ignore

// Command gen draws Rootkeeper's icons: the app icon and the two tray icons
// (sharing and paused). Run it with `go generate ./assets` from the module
// root; the PNGs it writes are committed.
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

var (
	teal     = color.NRGBA{0x0f, 0x76, 0x6e, 0xff}
	tealDark = color.NRGBA{0x0b, 0x4f, 0x4a, 0xff}
	grey     = color.NRGBA{0x6b, 0x72, 0x80, 0xff}
	greyDark = color.NRGBA{0x37, 0x41, 0x51, 0xff}
	white    = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	amber    = color.NRGBA{0xf5, 0x9e, 0x0b, 0xff}
)

// shape reports whether the point (x, y), in units of the icon's size
// (0..1), is inside.
type shape func(x, y float64) bool

func roundRect(x0, y0, x1, y1, r float64) shape {
	return func(x, y float64) bool {
		if x < x0 || x > x1 || y < y0 || y > y1 {
			return false
		}
		cx := math.Max(x0+r, math.Min(x, x1-r))
		cy := math.Max(y0+r, math.Min(y, y1-r))
		return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r
	}
}

func circle(cx, cy, r float64) shape {
	return func(x, y float64) bool { return (x-cx)*(x-cx)+(y-cy)*(y-cy) <= r*r }
}

type layer struct {
	s shape
	c color.NRGBA
}

// draw renders the layers, later ones on top, with 4×4 supersampling.
func draw(size int, layers []layer) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/ss) / float64(size)
					y := (float64(py) + (float64(sy)+0.5)/ss) / float64(size)
					for i := len(layers) - 1; i >= 0; i-- {
						if layers[i].s(x, y) {
							c := layers[i].c
							r += float64(c.R)
							g += float64(c.G)
							b += float64(c.B)
							a += 255
							break
						}
					}
				}
			}
			if a == 0 {
				continue
			}
			n := a / 255
			img.SetNRGBA(px, py, color.NRGBA{uint8(r / n), uint8(g / n), uint8(b / n), uint8(a / (ss * ss))})
		}
	}
	return img
}

// folder is a folder outline: a tab and a body.
func folder(body, tab color.NRGBA) []layer {
	return []layer{
		{roundRect(0.06, 0.14, 0.48, 0.34, 0.05), tab},
		{roundRect(0.06, 0.24, 0.94, 0.86, 0.07), body},
	}
}

// key is a small key drawn across the folder: what the app guards.
func key(c color.NRGBA) []layer {
	return []layer{
		{circle(0.36, 0.55, 0.12), c},
		{roundRect(0.40, 0.51, 0.80, 0.59, 0.02), c},
		{roundRect(0.66, 0.51, 0.72, 0.70, 0.015), c},
		{roundRect(0.74, 0.51, 0.80, 0.66, 0.015), c},
	}
}

func write(name string, img image.Image) {
	f, err := os.Create(name)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func main() {
	sharing := append(folder(teal, tealDark), key(white)...)
	sharing = append(sharing, layer{circle(0.36, 0.55, 0.05), teal})
	write("icon.png", draw(256, sharing))
	write("tray.png", draw(64, sharing))

	paused := folder(grey, greyDark)
	paused = append(paused,
		layer{roundRect(0.36, 0.40, 0.46, 0.74, 0.02), amber},
		layer{roundRect(0.54, 0.40, 0.64, 0.74, 0.02), amber},
	)
	write("tray-paused.png", draw(64, paused))
}

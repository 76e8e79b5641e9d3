// Go's text/template on the workload of bench/all (templates/py_prompt.gotmpl
// with ../data/py_prompt_N.json), for bench/all/run.sh.
//
// Usage: go run . [-templates ../templates] [-data ../../data] [-runs 7]
// [-time 200ms] [-out DIR] [-render-only] N...
//
// For each N it parses the template once (missingkey=error), decodes
// py_prompt_N.json once (integers as int64, other numbers as float64, as a
// host's Go structs would hold them), renders once (and with -out writes
// the text to DIR/py_prompt_N.go-text-template.txt), then, unless
// -render-only, times renders and prints one JSON line
// {"engine", "template", "median_ns", "runs", "iters", "bytes"}: the median
// of -runs runs of about -time each, with the calibration the Rust program
// uses (double the iterations until a run takes a tenth of -time, then
// scale to -time).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"text/template"
	"time"
)

const engine = "go-text-template"

// decode reads JSON with integers as int64 and other numbers as float64
// (plain decoding would make every number a float64).
func decode(path string) (any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = numbers(x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = numbers(x)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

// One line of output, in the field order of the other bench programs.
type report struct {
	Engine   string `json:"engine"`
	Template string `json:"template"`
	MedianNs int64  `json:"median_ns"`
	Runs     int    `json:"runs"`
	Iters    int    `json:"iters"`
	Bytes    int    `json:"bytes"`
}

type options struct {
	templates, data, out string
	runs                 int
	runTime              time.Duration
	renderOnly           bool
}

func main() {
	var o options
	flag.StringVar(&o.templates, "templates", "../templates", "directory with py_prompt.gotmpl")
	flag.StringVar(&o.data, "data", "../../data", "directory with py_prompt_N.json")
	flag.IntVar(&o.runs, "runs", 7, "timed runs per size (the median is reported)")
	flag.DurationVar(&o.runTime, "time", 200*time.Millisecond, "approximate length of one run")
	flag.StringVar(&o.out, "out", "", "write py_prompt_N."+engine+".txt with the rendered text here")
	flag.BoolVar(&o.renderOnly, "render-only", false, "render once (for -out), do not time")
	flag.Parse()
	if flag.NArg() == 0 || o.runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: bench-all-go [flags] N...")
		os.Exit(2)
	}
	for _, size := range flag.Args() {
		if err := bench("py_prompt_"+size, o); err != nil {
			fmt.Fprintf(os.Stderr, "py_prompt_%s: %v\n", size, err)
			os.Exit(1)
		}
	}
}

func bench(name string, o options) error {
	source, err := os.ReadFile(filepath.Join(o.templates, "py_prompt.gotmpl"))
	if err != nil {
		return err
	}
	tmpl, err := template.New("py_prompt").Option("missingkey=error").Parse(string(source))
	if err != nil {
		return err
	}
	data, err := decode(filepath.Join(o.data, name+".json"))
	if err != nil {
		return err
	}
	var first bytes.Buffer
	if err := tmpl.Execute(&first, data); err != nil {
		return err
	}
	if o.out != "" {
		path := filepath.Join(o.out, name+"."+engine+".txt")
		if err := os.WriteFile(path, first.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if o.renderOnly {
		return nil
	}
	// A fresh buffer per render, as a host building a prompt string would
	// (the Rust engines return a new String each time).
	render := func() error {
		var out bytes.Buffer
		return tmpl.Execute(&out, data)
	}
	run := func(iters int) (time.Duration, error) {
		start := time.Now()
		for i := 0; i < iters; i++ {
			if err := render(); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	iters := 1
	for {
		elapsed, err := run(iters)
		if err != nil {
			return err
		}
		if elapsed >= o.runTime/10 {
			iters = int(float64(iters) * float64(o.runTime) / float64(elapsed))
			if iters < 1 {
				iters = 1
			}
			break
		}
		iters *= 2
	}
	perOp := make([]float64, o.runs)
	for r := range perOp {
		elapsed, err := run(iters)
		if err != nil {
			return err
		}
		perOp[r] = float64(elapsed.Nanoseconds()) / float64(iters)
	}
	sort.Float64s(perOp)
	line, err := json.Marshal(report{
		Engine:   engine,
		Template: name,
		MedianNs: int64(perOp[len(perOp)/2] + 0.5),
		Runs:     o.runs,
		Iters:    iters,
		Bytes:    first.Len(),
	})
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	return nil
}

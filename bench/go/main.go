// Times Go's text/template on the benchmark templates under bench/data/,
// with the options and functions Sortie uses (missingkey=error; toJSON,
// join with the separator first, lower).
//
// Usage: go run . [-data ../data] [-runs 11] [-time 200ms] [-out DIR] NAME...
//
// For each NAME it parses NAME.gotmpl once, decodes NAME.json, renders it
// repeatedly and prints one line "go NAME MEDIAN_NS_PER_OP" (the median over
// -runs runs of about -time each). With -out it also writes the rendered
// text to DIR/NAME.go.txt so compare.sh can check it byte for byte.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"
)

var funcs = template.FuncMap{
	// Sortie's three functions.
	"toJSON": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"join": func(sep string, v any) (string, error) {
		items, ok := v.([]any)
		if !ok {
			return "", fmt.Errorf("join: unsupported type %T", v)
		}
		parts := make([]string, len(items))
		for i, item := range items {
			parts[i] = fmt.Sprint(item)
		}
		return strings.Join(parts, sep), nil
	},
	"lower": strings.ToLower,
}

// decode reads JSON with integers as int64 and other numbers as float64,
// so that printf "%d" and printing behave as with a host's Go structs (and
// as teleprompt, which keeps JSON integers and floats apart).
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

func main() {
	dataDir := flag.String("data", "../data", "directory with NAME.gotmpl and NAME.json")
	runs := flag.Int("runs", 11, "timed runs per template (the median is reported)")
	runTime := flag.Duration("time", 200*time.Millisecond, "approximate length of one run")
	outDir := flag.String("out", "", "write NAME.go.txt with the rendered text here")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gotemplate [flags] NAME...")
		os.Exit(2)
	}
	for _, name := range flag.Args() {
		if err := bench(name, *dataDir, *runs, *runTime, *outDir); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func bench(name, dataDir string, runs int, runTime time.Duration, outDir string) error {
	source, err := os.ReadFile(filepath.Join(dataDir, name+".gotmpl"))
	if err != nil {
		return err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(string(source))
	if err != nil {
		return err
	}
	data, err := decode(filepath.Join(dataDir, name+".json"))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return err
	}
	if outDir != "" {
		if err := os.WriteFile(filepath.Join(outDir, name+".go.txt"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	// Each render gets a fresh buffer, as a host building a prompt string
	// would; a reused buffer would save Go the output allocation that the
	// Rust engines pay.
	render := func() error {
		var out bytes.Buffer
		return tmpl.Execute(&out, data)
	}
	// Calibrate: iterations for one run of about runTime.
	iters := 1
	for {
		start := time.Now()
		for i := 0; i < iters; i++ {
			if err := render(); err != nil {
				return err
			}
		}
		if elapsed := time.Since(start); elapsed >= runTime/10 {
			iters = int(float64(iters) * float64(runTime) / float64(elapsed))
			if iters < 1 {
				iters = 1
			}
			break
		}
		iters *= 2
	}
	perOp := make([]float64, runs)
	for r := range perOp {
		start := time.Now()
		for i := 0; i < iters; i++ {
			if err := render(); err != nil {
				return err
			}
		}
		perOp[r] = float64(time.Since(start).Nanoseconds()) / float64(iters)
	}
	sort.Float64s(perOp)
	fmt.Printf("go %s %.0f\n", name, perOp[len(perOp)/2])
	return nil
}

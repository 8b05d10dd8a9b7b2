// Command render renders a Helm chart the way `helm template` does, for machines that have
// no helm binary. It uses the same engine as Helm (Go text/template plus Sprig v3) and
// re-implements the parts of Helm the jobguard chart relies on:
//
//   - .Values: values.yaml coalesced with -f files (maps merged, a null removes a key) and
//     --set / --set-string (a.b=c, a[0]=x, a={x,y}, comma-separated, \, and \. escapes);
//     numbers from YAML files become float64 as in Helm (sigs.k8s.io/yaml goes through JSON),
//     --set integers become int64 as in Helm's strvals.
//   - .Release (Name, Namespace, Service, IsInstall, IsUpgrade, Revision), .Chart (Chart.yaml
//     with Helm's capitalised keys), .Capabilities (KubeVersion, APIVersions.Has,
//     HelmVersion), .Template (Name, BasePath), Chart.yaml kubeVersion constraint check.
//   - include, tpl, required, fail, toYaml, fromYaml, fromYamlArray, toJson, fromJson, lookup
//     (empty unless --lookup-file gives objects that "exist in the cluster"); env and
//     expandenv are removed as in Helm; missingkey=zero and "<no value>" → "".
//   - templates/_*.tpl are parsed but not rendered; NOTES.txt is rendered (errors count) and
//     printed to stderr with --notes.
//
// It does not implement .Files, subcharts or hooks ordering; the chart does not use them.
//
// Build (Debian packages golang-go, golang-github-masterminds-sprig-dev, golang-gopkg-yaml.v3-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$BUILD/.gocache go build -o $BUILD/render .
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/semver"
	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

type capabilities struct {
	KubeVersion kubeVersion
	APIVersions apiVersions
	HelmVersion map[string]string
}

type kubeVersion struct {
	Version string
	Major   string
	Minor   string
}

func (k kubeVersion) String() string     { return k.Version }
func (k kubeVersion) GitVersion() string { return k.Version }

type apiVersions []string

// Has reports whether an API version ("group/version" or "group/version/Kind") is known.
func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func run() error {
	var valueFiles, sets, setStrings, apiVers multiFlag
	name := flag.String("name", "jobguard", "release name")
	namespace := flag.String("namespace", "default", "release namespace")
	kubeVer := flag.String("kube-version", "v1.30.0", "Kubernetes version for .Capabilities")
	isUpgrade := flag.Bool("is-upgrade", false, "render as an upgrade (.Release.IsUpgrade)")
	revision := flag.Int("revision", 0, "release revision (default 1, or 2 with --is-upgrade)")
	lookupFile := flag.String("lookup-file", "", "YAML file of objects that lookup finds")
	valuesOut := flag.String("values-out", "", "write the coalesced values as JSON to this file")
	notes := flag.Bool("notes", false, "print the rendered NOTES.txt to stderr")
	flag.Var(&valueFiles, "f", "values file (repeatable)")
	flag.Var(&valueFiles, "values", "values file (repeatable)")
	flag.Var(&sets, "set", "set values: a.b=c,d[0]=e (repeatable)")
	flag.Var(&setStrings, "set-string", "set string values (repeatable)")
	flag.Var(&apiVers, "api-versions", "extra API versions for .Capabilities.APIVersions (repeatable)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: render [flags] CHART_DIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	chartDir := flag.Arg(0)

	chartMeta, err := readYAMLMap(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		return err
	}
	chartName, _ := chartMeta["name"].(string)
	if chartName == "" {
		return errors.New("Chart.yaml: name is required")
	}
	if v, _ := chartMeta["apiVersion"].(string); v != "v2" {
		return fmt.Errorf("Chart.yaml: apiVersion must be v2, got %q", v)
	}

	kv, err := semver.NewVersion(*kubeVer)
	if err != nil {
		return fmt.Errorf("--kube-version: %v", err)
	}
	if c, _ := chartMeta["kubeVersion"].(string); c != "" {
		cons, err := semver.NewConstraint(c)
		if err != nil {
			return fmt.Errorf("Chart.yaml kubeVersion: %v", err)
		}
		if !cons.Check(kv) {
			return fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes v%s", c, kv.String())
		}
	}

	// Values: chart defaults, then -f files in order, then --set, then --set-string.
	vals, err := readYAMLMap(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return err
	}
	for _, f := range valueFiles {
		m, err := readYAMLMap(f)
		if err != nil {
			return err
		}
		coalesce(vals, m)
	}
	vals = jsonRoundTrip(vals).(map[string]interface{})
	for _, s := range sets {
		if err := parseSet(s, vals, true); err != nil {
			return fmt.Errorf("failed parsing --set data: %v", err)
		}
	}
	for _, s := range setStrings {
		if err := parseSet(s, vals, false); err != nil {
			return fmt.Errorf("failed parsing --set-string data: %v", err)
		}
	}
	dropNulls(vals)
	if *valuesOut != "" {
		b, err := json.MarshalIndent(vals, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*valuesOut, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}

	var lookupObjs []map[string]interface{}
	if *lookupFile != "" {
		b, err := os.ReadFile(*lookupFile)
		if err != nil {
			return err
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var m map[string]interface{}
			if err := dec.Decode(&m); err != nil {
				if err.Error() == "EOF" {
					break
				}
				return fmt.Errorf("%s: %v", *lookupFile, err)
			}
			if m != nil {
				lookupObjs = append(lookupObjs, jsonRoundTrip(m).(map[string]interface{}))
			}
		}
	}

	rev := *revision
	if rev == 0 {
		rev = 1
		if *isUpgrade {
			rev = 2
		}
	}
	chartObj := map[string]interface{}{}
	for k, v := range chartMeta {
		// Helm exposes chart.Metadata: Go field names are the capitalised YAML keys.
		switch k {
		case "apiVersion":
			chartObj["APIVersion"] = v
		case "appVersion":
			chartObj["AppVersion"] = v
		case "kubeVersion":
			chartObj["KubeVersion"] = v
		default:
			chartObj[strings.ToUpper(k[:1])+k[1:]] = v
		}
	}
	caps := capabilities{
		KubeVersion: kubeVersion{
			Version: "v" + kv.String(),
			Major:   strconv.FormatUint(kv.Major(), 10),
			Minor:   strconv.FormatUint(kv.Minor(), 10),
		},
		APIVersions: append(apiVersions{
			"v1", "apps/v1", "batch/v1", "policy/v1", "networking.k8s.io/v1",
			"admissionregistration.k8s.io/v1", "rbac.authorization.k8s.io/v1",
			"autoscaling/v2", "coordination.k8s.io/v1",
		}, apiVers...),
		HelmVersion: map[string]string{"Version": "v3.14.0-render"},
	}
	top := map[string]interface{}{
		"Values": vals,
		"Release": map[string]interface{}{
			"Name": *name, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": !*isUpgrade, "IsUpgrade": *isUpgrade, "Revision": rev,
		},
		"Chart":        chartObj,
		"Capabilities": caps,
	}

	// Collect templates.
	var files []string
	tdir := filepath.Join(chartDir, "templates")
	err = filepath.Walk(tdir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(files)

	root := template.New("gotpl")
	root.Option("missingkey=zero")
	funcs := funcMap(root, lookupObjs)
	root.Funcs(funcs)
	names := map[string]string{} // template name -> file path
	for _, f := range files {
		rel, _ := filepath.Rel(chartDir, f)
		tname := path.Join(chartName, filepath.ToSlash(rel))
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if _, err := root.New(tname).Parse(string(b)); err != nil {
			return fmt.Errorf("parse error in %q: %v", tname, err)
		}
		names[tname] = f
	}

	var tnames []string
	for n := range names {
		tnames = append(tnames, n)
	}
	sort.Strings(tnames)
	var out bytes.Buffer
	for _, tname := range tnames {
		base := path.Base(tname)
		if strings.HasPrefix(base, "_") {
			continue
		}
		isNotes := base == "NOTES.txt"
		data := map[string]interface{}{}
		for k, v := range top {
			data[k] = v
		}
		data["Template"] = map[string]interface{}{"Name": tname, "BasePath": path.Join(chartName, "templates")}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, tname, data); err != nil {
			return cleanupErr(err)
		}
		s := strings.ReplaceAll(buf.String(), "<no value>", "")
		if isNotes {
			if *notes {
				fmt.Fprint(os.Stderr, s)
			}
			continue
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		if !strings.HasSuffix(base, ".yaml") && !strings.HasSuffix(base, ".yml") && !strings.HasSuffix(base, ".tpl") {
			continue // Helm renders only manifests; other files are ignored
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", tname, strings.TrimRight(s, "\n"))
	}
	_, err = os.Stdout.Write(out.Bytes())
	return err
}

var execErrRe = regexp.MustCompile(`^template: ([^:]+):\d+:\d+: executing "[^"]+" at <[^>]*>: error calling (?:required|fail): `)

// cleanupErr shortens required/fail errors the way Helm's output reads.
func cleanupErr(err error) error {
	msg := err.Error()
	if m := execErrRe.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("execution error at (%s): %s", m[1], msg[len(m[0]):])
	}
	return err
}

func readYAMLMap(p string) (map[string]interface{}, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	m := map[string]interface{}{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %v", p, err)
	}
	if m == nil {
		m = map[string]interface{}{}
	}
	return m, nil
}

// jsonRoundTrip mimics sigs.k8s.io/yaml: the result has only JSON types (float64 numbers).
func jsonRoundTrip(v interface{}) interface{} {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out interface{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// coalesce merges src into dst: maps recursively, anything else replaced; null deletes.
func coalesce(dst, src map[string]interface{}) {
	for k, sv := range src {
		if sv == nil {
			dst[k] = nil // removed by dropNulls after --set (a later --set may set it again)
			continue
		}
		sm, sIsMap := sv.(map[string]interface{})
		dm, dIsMap := dst[k].(map[string]interface{})
		if sIsMap && dIsMap {
			coalesce(dm, sm)
			continue
		}
		dst[k] = sv
	}
}

func dropNulls(m map[string]interface{}) {
	for k, v := range m {
		switch t := v.(type) {
		case nil:
			delete(m, k)
		case map[string]interface{}:
			dropNulls(t)
		}
	}
}

// ---- --set parsing (a subset of Helm's strvals) ----

func splitUnescaped(s string, sep rune) []string {
	var parts []string
	var cur strings.Builder
	depth := 0
	esc := false
	for _, r := range s {
		switch {
		case esc:
			if r != sep && r != '.' && r != ',' && r != '\\' && r != '[' && r != ']' && r != '=' {
				cur.WriteRune('\\')
			}
			if r == '.' && sep != '.' {
				cur.WriteRune('\\') // keep \. for the key splitter
			}
			cur.WriteRune(r)
			esc = false
		case r == '\\':
			esc = true
		case r == '{':
			depth++
			cur.WriteRune(r)
		case r == '}':
			depth--
			cur.WriteRune(r)
		case r == sep && depth == 0:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	parts = append(parts, cur.String())
	return parts
}

func typedVal(s string, typed bool) interface{} {
	if !typed {
		return s
	}
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if s == "0" {
		return int64(0)
	}
	if len(s) > 0 && s[0] != '0' {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	return s
}

var idxRe = regexp.MustCompile(`^(.*)\[(\d+)\]$`)

func parseSet(s string, vals map[string]interface{}, typed bool) error {
	for _, pair := range splitUnescaped(s, ',') {
		if pair == "" {
			continue
		}
		kv := strings.SplitN(pair, "=", 2)
		if len(kv) != 2 {
			return fmt.Errorf("key %q has no value", pair)
		}
		var val interface{}
		if strings.HasPrefix(kv[1], "{") && strings.HasSuffix(kv[1], "}") {
			var list []interface{}
			inner := kv[1][1 : len(kv[1])-1]
			if inner != "" {
				for _, e := range splitUnescaped(inner, ',') {
					list = append(list, typedVal(e, typed))
				}
			}
			val = list
		} else {
			val = typedVal(kv[1], typed)
		}
		keys := splitUnescaped(kv[0], '.')
		for i := range keys {
			keys[i] = strings.ReplaceAll(keys[i], `\.`, ".")
		}
		if err := setPath(vals, keys, val); err != nil {
			return err
		}
	}
	return nil
}

func setPath(m map[string]interface{}, keys []string, val interface{}) error {
	k := keys[0]
	last := len(keys) == 1
	if mm := idxRe.FindStringSubmatch(k); mm != nil {
		name := mm[1]
		idx, _ := strconv.Atoi(mm[2])
		list, _ := m[name].([]interface{})
		for len(list) <= idx {
			list = append(list, nil)
		}
		if last {
			list[idx] = val
		} else {
			sub, ok := list[idx].(map[string]interface{})
			if !ok {
				sub = map[string]interface{}{}
			}
			if err := setPath(sub, keys[1:], val); err != nil {
				return err
			}
			list[idx] = sub
		}
		m[name] = list
		return nil
	}
	if last {
		m[k] = val
		return nil
	}
	sub, ok := m[k].(map[string]interface{})
	if !ok {
		sub = map[string]interface{}{}
		m[k] = sub
	}
	return setPath(sub, keys[1:], val)
}

// ---- template functions ----

func toYAML(v interface{}) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(jsonRoundTrip(v)); err != nil {
		return ""
	}
	_ = enc.Close()
	return strings.TrimSuffix(buf.String(), "\n")
}

func funcMap(root *template.Template, lookupObjs []map[string]interface{}) template.FuncMap {
	f := sprig.TxtFuncMap()
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = toYAML
	f["mustToYaml"] = func(v interface{}) (string, error) { return toYAML(v), nil }
	f["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			return map[string]interface{}{"Error": err.Error()}
		}
		if m == nil {
			return map[string]interface{}{}
		}
		return jsonRoundTrip(m).(map[string]interface{})
	}
	f["fromYamlArray"] = func(s string) []interface{} {
		var a []interface{}
		if err := yaml.Unmarshal([]byte(s), &a); err != nil {
			return []interface{}{err.Error()}
		}
		if a == nil {
			return []interface{}{}
		}
		return jsonRoundTrip(a).([]interface{})
	}
	f["toJson"] = func(v interface{}) string {
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
	f["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return map[string]interface{}{"Error": err.Error()}
		}
		return m
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return v, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return v, errors.New(msg)
		}
		return v, nil
	}
	f["fail"] = func(msg string) (string, error) { return "", errors.New(msg) }
	f["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["tpl"] = func(tplText string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(tplText)
		if err != nil {
			return "", fmt.Errorf("cannot parse template %q: %v", tplText, err)
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", fmt.Errorf("error during tpl function execution for %q: %v", tplText, err)
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	f["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		var items []interface{}
		for _, o := range lookupObjs {
			md, _ := o["metadata"].(map[string]interface{})
			if o["apiVersion"] != apiVersion || o["kind"] != kind {
				continue
			}
			if namespace != "" && md["namespace"] != namespace {
				continue
			}
			if name != "" {
				if md["name"] == name {
					return o, nil
				}
				continue
			}
			items = append(items, o)
		}
		if name == "" {
			return map[string]interface{}{"apiVersion": "v1", "kind": kind + "List", "items": items}, nil
		}
		return map[string]interface{}{}, nil
	}
	return f
}

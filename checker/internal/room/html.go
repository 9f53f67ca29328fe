package room

import (
	"html/template"
	"io"
	"strings"
)

// HTML writes the grid as one self-contained page: inline style, no
// script, nothing fetched.
func (g *Grid) HTML(w io.Writer) error {
	return page.Execute(w, view{Grid: g, CSS: template.CSS(Stylesheet)})
}

// LivePage writes the grid as the live board's page: the same page, in
// large type, with the script at scriptPath that replaces the table
// with each new one the server sends (see Table).
func (g *Grid) LivePage(w io.Writer, scriptPath string) error {
	return page.Execute(w, view{Grid: g, CSS: template.CSS(Stylesheet), Script: scriptPath})
}

// Table writes the grid's table, as LivePage has it, followed by the room
// at a glance: the board sends both after each change.
func (g *Grid) Table(w io.Writer) error {
	return page.ExecuteTemplate(w, "table", view{Grid: g, Live: true})
}

// view is what the templates read.
type view struct {
	*Grid
	CSS    template.CSS
	Script string // the live board's script; "" in a report
	Live   bool   // an event's table: the glance follows it, for the script to swap in
}

// Stylesheet is the page's style, inline in a <style> element (the board
// allows exactly it in its Content-Security-Policy, by its hash).
const Stylesheet = `
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
  h1 { font-size: 1.4rem; }
  table { border-collapse: collapse; }
  th, td { border: 1px solid #ccc; padding: .35rem .6rem; text-align: center; }
  th.participant, td.participant { text-align: left; max-width: 16em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  thead th { background: #f4f4f4; vertical-align: bottom; }
  thead th small { display: block; font-weight: normal; color: #666; max-width: 9rem; overflow-wrap: anywhere; }
  td small { display: block; font-size: .8em; }
  td.pass { background: #d9f2d9; }
  td.bonus { background: #b5e6b5; font-weight: bold; }
  td.fail { background: #fdf0c8; }
  td.build { background: #fbe0dc; }
  td.todo { background: #eee; color: #555; }
  td.none { color: #aaa; }
  td.unverified { outline: 3px dashed #a0f; outline-offset: -3px; }
  tr.quiet td { opacity: .45; }
  tfoot td { font-weight: bold; background: #f4f4f4; }
  p.legend { color: #555; }
  #glance { display: flex; flex-wrap: wrap; gap: .3rem 1.5rem; margin: 0 0 .6rem; }
  #glance div { max-width: 36rem; }
  #glance h2 { font-size: 1em; margin: 0; }
  #glance p, #glance ol { margin: 0; }
  #glance ol { padding-left: 1.4em; }
  #glance .stuck { color: #b00; font-weight: bold; }
  body.live { font-size: 24px; margin: .5rem 1rem; color: #000; background: #fff; }
  body.live h1 { font-size: 1.2rem; margin: 0; display: inline; }
  body.live #glance { font-size: .75em; }
  body.live th, body.live td { border: 2px solid #000; padding: .3rem .6rem; }
  body.live thead th small { color: #333; }
  body.live td.pass { background: #0a6b0a; color: #fff; }
  body.live td.bonus { background: #064d06; color: #fff; }
  body.live td.fail { background: #ffd23f; color: #000; }
  body.live td.build { background: #c0392b; color: #fff; }
  body.live td.todo { background: #ddd; color: #000; }
  body.live td.none { color: #777; }
  body.live p.legend { color: #000; font-size: .6em; margin: .3rem 0 0; }
  body.live table.compact { font-size: .68em; }
  body.live table.compact td, body.live table.compact th { padding: 0 .4rem; line-height: 1.3; border-width: 1px; }
  body.live table.compact td small { display: inline; margin-left: .4em; }
  body.live table.compact thead th small { display: none; }
  #status { font-size: .6em; display: inline; margin-left: 1em; }
`

// compactRows is the row count from which the live board draws compact
// rows: one line each, so that 30 fit one 1920×1080 screen.
const compactRows = 12

var page = template.Must(template.New("room").Funcs(template.FuncMap{
	"short": func(slug string) string { // "06-retry" → "06"
		n, _, _ := strings.Cut(slug, "-")
		return n
	},
	"legend":  func() string { return Legend },
	"compact": func(n int) bool { return n >= compactRows },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Room · {{len .Rows}} participants</title>
<style>{{.CSS}}</style>
{{- if .Script}}
<script src="{{.Script}}" defer></script>
{{- end}}
</head>
<body{{if .Script}} class="live"{{end}}>
<h1>Room · {{len .Rows}} participants · {{len .Katas}} katas</h1>
{{- if .Script}}
<p id="status">connecting…</p>
{{- end}}
{{template "glance" .}}
{{template "table" .}}
<p class="legend">{{legend}}</p>
</body>
</html>
{{define "glance"}}<section id="glance">{{range .Glance}}<div data-kata="{{.Kata.Slug}}"><h2>{{short .Kata.Slug}} {{.Kata.Title}}</h2><p>{{.Passed}} passed · {{.Working}} working · <span class="stuck">{{.StuckCount}}</span> · {{.NotStarted}} not started</p>{{with .Top}}<ol>{{range .}}<li><strong>{{.String}}</strong>{{with .Text}} · {{.}}{{end}}</li>{{end}}</ol>{{end}}</div>{{end}}</section>{{end}}
{{- define "table"}}<table id="room"{{if compact (len .Rows)}} class="compact"{{end}}>
<thead>
<tr><th class="participant">participant</th>{{range .Katas}}<th data-kata="{{.Slug}}" title="{{.Title}}">{{short .Slug}}<small>{{.Title}}</small></th>{{end}}<th>passed</th></tr>
</thead>
<tbody>
{{range $r := .Sorted}}<tr data-participant="{{$r.Participant}}"{{if $.Quiet $r}} class="quiet"{{end}}><td class="participant">{{$r.Participant}}</td>{{range $k := $.Katas}}{{$c := index $r.Cells $k.Slug}}<td class="{{$c.State}}{{if $c.Unverified}} unverified{{end}}" data-kata="{{$k.Slug}}"{{with $c.Where}} title="{{$c.Stuck}}: {{$c.StuckText}}"{{end}}>{{$c.Text}}{{with $.Where $c}}<small>{{.}}</small>{{end}}{{with $c.Mark}}<small class="best">{{.}}</small>{{end}}</td>{{end}}<td>{{$r.Passed}}</td></tr>
{{end}}</tbody>
<tfoot>
<tr><td class="participant">passed by</td>{{range .Katas}}<td data-kata="{{.Slug}}">{{$.PassedBy .Slug}} of {{len $.Rows}}</td>{{end}}<td></td></tr>
</tfoot>
</table>
{{- if .Live}}
{{template "glance" .}}
{{- end}}{{end}}`))

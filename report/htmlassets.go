package report

import (
	_ "embed"
	"html/template"
)

// The page's assets, embedded so that the report is one self-contained file. uPlot is
// vendored from npm with its licence (see assets/README.md).
var (
	//go:embed assets/page.html
	assetPage string
	//go:embed assets/compare.html
	assetComparePage string
	//go:embed assets/style.css
	assetStyle string
	//go:embed assets/common.js
	assetCommonJS string
	//go:embed assets/flame.js
	assetFlameJS string
	//go:embed assets/app.js
	assetAppJS string
	//go:embed assets/vendor/uplot/uPlot.iife.min.js
	assetUPlotJS string
	//go:embed assets/vendor/uplot/uPlot.min.css
	assetUPlotCSS string
	//go:embed assets/vendor/uplot/LICENSE
	assetUPlotLicense string
)

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"uplotLicense": func() string { return assetUPlotLicense },
	"inc":          func(i int) int { return i + 1 },
}).Parse(assetPage))

var comparePageTemplate = template.Must(template.New("compare").Funcs(template.FuncMap{
	"uplotLicense": func() string { return assetUPlotLicense },
}).Parse(assetComparePage))

package command

import (
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/evidence"
	"github.com/flameox/flameox/internal/formats"
	"github.com/flameox/flameox/internal/param"
	"github.com/flameox/flameox/internal/registry"
)

// OptionFlag is the flag that carries decoder options, --option k=v,...;
// its values are read with OptionValues.
const OptionFlag = "option"

// Parse parses args into cli with kong. A usage error is an
// INVALID_ARGUMENT failure; --help prints and exits 0. A command with the
// --option flag lists every format's declared decoder options at the end
// of its help, so the flag's help cannot drift from the declarations.
func Parse(cli any, name, description string, args []string, opts ...kong.Option) (*kong.Context, error) {
	opts = append([]kong.Option{
		kong.Name(name),
		kong.Description(description),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Exit(os.Exit),
		kong.Help(helpWithOptions(registry.Formats())),
	}, opts...)
	p, err := kong.New(cli, opts...)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInternal, err, "build command line")
	}
	ctx, err := p.Parse(args)
	if err != nil {
		return nil, evidence.Wrap(evidence.CodeInvalidArgument, err, "")
	}
	return ctx, nil
}

// helpWithOptions prints kong's help, then the decoder options of specs
// when the command has the --option flag.
func helpWithOptions(specs []*formats.Spec) kong.HelpPrinter {
	return func(o kong.HelpOptions, ctx *kong.Context) error {
		if err := kong.DefaultHelpPrinter(o, ctx); err != nil || o.Summary {
			return err
		}
		for _, f := range ctx.Model.Flags {
			if f.Name == OptionFlag {
				_, err := fmt.Fprint(ctx.Stdout, "\n"+OptionsHelp(specs))
				return err
			}
		}
		return nil
	}
}

// helpWidth is where OptionsHelp wraps descriptions.
const helpWidth = 80

// OptionsHelp lists the decoder options each format declares: name, type,
// default and range from the declarations, then what the option does.
func OptionsHelp(specs []*formats.Spec) string {
	var b strings.Builder
	b.WriteString("Decoder options (--" + OptionFlag + " NAME=VALUE,...), by format. A format takes only\n" +
		"its own, and the text becomes the declared type:\n")
	const indent = "      "
	for _, s := range specs {
		if len(s.Options) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n  %s (%s)\n", s.Name, s.Title)
		for _, p := range s.Options {
			fmt.Fprintf(&b, "    %s=%s\n", p.Name, strings.ToUpper(p.TypeText("|")))
			var facts []string
			if d := p.DefaultText(); d != "" {
				facts = append(facts, "default "+d)
			}
			if r := p.Range(); r != "" {
				facts = append(facts, r)
			}
			doc := p.Doc
			if len(facts) > 0 {
				doc += " (" + strings.Join(facts, "; ") + ")"
			}
			b.WriteString(wrap(doc, indent, helpWidth))
		}
	}
	return b.String()
}

// wrap breaks text into lines of at most width runes (a longer word
// stays whole), each starting with indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := indent
	for _, w := range strings.Fields(text) {
		if line != indent && len([]rune(line))+1+len([]rune(w)) > width {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
	return b.String()
}

// OptionValues turns --option k=v pairs into decoder options. Each value
// stays text until the format that declares the option types it, so "10"
// is an integer for an integer option and a string for a string one.
func OptionValues(m map[string]string) evidence.Object {
	out := evidence.Object{}
	for k, v := range m {
		out[k] = param.FlagText(v)
	}
	return out
}

package command

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
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
	}, append(VersionOptions(name), opts...)...)
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

// NoInput is the failure of a command that would read stdin when stdin is
// a terminal: nothing is piped in, so rather than wait silently for
// Ctrl-D it prints its usage on stderr and fails INVALID_ARGUMENT (exit 2).
func NoInput(kctx *kong.Context, stderr io.Writer, hint string) error {
	kctx.Stdout = stderr
	_ = kong.DefaultShortHelpPrinter(kong.HelpOptions{}, kctx)
	return evidence.Failf(evidence.CodeInvalidArgument, "no input: stdin is a terminal; %s", hint)
}

// versionFlag is --version on every command.
type versionFlag struct {
	Version kong.VersionFlag `help:"Print the version, the commit it was built from and the Go version, then exit."`
}

// VersionOptions add --version to a kong parser; Parse adds them itself.
func VersionOptions(name string) []kong.Option {
	return []kong.Option{kong.Embed(&versionFlag{}), kong.Vars{"version": Version(name)}}
}

// Version says what this binary is: its module version, the commit it was
// built from (with "modified" when the tree had uncommitted changes) and
// the Go version, from the build information the go command records.
func Version(name string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return name + " (no build information)"
	}
	return versionText(name, bi)
}

func versionText(name string, bi *debug.BuildInfo) string {
	s := name + " " + bi.Main.Version
	if bi.Main.Version == "" {
		s += "(devel)"
	}
	var rev, modified, at string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			modified = kv.Value
		case "vcs.time":
			at = kv.Value
		}
	}
	switch {
	case rev == "":
		s += ", commit unknown (not built from a git checkout)"
	default:
		s += ", commit " + rev
		if at != "" {
			s += " (" + at + ")"
		}
		if modified == "true" {
			s += ", modified"
		}
	}
	return s + ", " + bi.GoVersion
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

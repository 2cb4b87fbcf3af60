package command

import (
	"encoding/json"
	"os"

	"github.com/alecthomas/kong"

	"github.com/flameox/flameox/internal/evidence"
)

// Parse parses args into cli with kong. A usage error is an
// INVALID_ARGUMENT failure; --help prints and exits 0.
func Parse(cli any, name, description string, args []string, opts ...kong.Option) (*kong.Context, error) {
	opts = append([]kong.Option{
		kong.Name(name),
		kong.Description(description),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Exit(os.Exit),
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

// OptionValues turns --option k=v pairs into decoder options: a value that
// is a JSON scalar (number, boolean, null) keeps that type, anything else
// is a string.
func OptionValues(m map[string]string) evidence.Object {
	out := evidence.Object{}
	for k, v := range m {
		var x any
		if err := json.Unmarshal([]byte(v), &x); err == nil {
			switch x.(type) {
			case float64:
				out[k] = json.Number(v)
				continue
			case bool, nil:
				out[k] = x
				continue
			}
		}
		out[k] = v
	}
	return out
}

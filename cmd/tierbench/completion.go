package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

func init() {
	register(command{name: "completion", summary: "print a shell completion script: bash, zsh or fish", run: runCompletion})
}

const completionUsage = `Usage: tierbench completion bash|zsh|fish

Prints a script that completes tierbench's commands and each command's
flags in that shell; positional arguments complete as file names.

  bash:  source <(tierbench completion bash)     (or save it under /etc/bash_completion.d/)
  zsh:   source <(tierbench completion zsh)      (after compinit)
  fish:  tierbench completion fish > ~/.config/fish/completions/tierbench.fish

`

func runCompletion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), completionUsage)
		fs.PrintDefaults()
	}
	if status, ok := parseArgs(fs, args, 1, stdout, stderr); !ok {
		return status
	}
	spec := completionSpec()
	switch shell := fs.Arg(0); shell {
	case "bash":
		writeBash(stdout, spec)
	case "zsh":
		writeZsh(stdout, spec)
	case "fish":
		writeFish(stdout, spec)
	default:
		fmt.Fprintf(stderr, "tierbench completion: unknown shell %q: want bash, zsh or fish\n", shell)
		return 2
	}
	return 0
}

// commandFlags is one subcommand's name and its flags as they are typed.
type commandFlags struct {
	name    string
	summary string
	flags   []string // "--dbsize", "-t"
}

// completionSpec lists the visible subcommands in usage order, each with
// its flags, read from its own FlagSet.
func completionSpec() []commandFlags {
	sorted := slices.Clone(commands)
	slices.SortStableFunc(sorted, func(a, b command) int { return rank(a.name) - rank(b.name) })
	var spec []commandFlags
	for _, c := range sorted {
		if c.hidden {
			continue
		}
		cf := commandFlags{name: c.name, summary: c.summary}
		if fs, _, ok := flagSetOf(c.name); ok {
			fs.VisitAll(func(f *flag.Flag) { cf.flags = append(cf.flags, dashed(f.Name)) })
		}
		cf.flags = append(cf.flags, "--help")
		spec = append(spec, cf)
	}
	spec = append(spec, commandFlags{name: "help", summary: "the flags of a command"}, commandFlags{name: "version", summary: "print the version"})
	return spec
}

// writeCases writes one shell's case for each command: help's and
// completion's given, and flags(c) for every command with flags.
func writeCases(w io.Writer, spec []commandFlags, help, completion string, flags func(commandFlags) string) {
	for _, c := range spec {
		switch {
		case c.name == "help":
			io.WriteString(w, help)
		case c.name == "completion":
			io.WriteString(w, completion)
		case len(c.flags) > 0:
			io.WriteString(w, flags(c))
		}
	}
}

// withFlags are the commands of spec that take flags: the ones help
// explains.
func withFlags(spec []commandFlags) []commandFlags {
	var out []commandFlags
	for _, c := range spec {
		if len(c.flags) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func commandNames(spec []commandFlags) string {
	names := make([]string, len(spec))
	for i, c := range spec {
		names[i] = c.name
	}
	return strings.Join(names, " ")
}

func writeBash(w io.Writer, spec []commandFlags) {
	fmt.Fprintf(w, `# bash completion for tierbench: source <(tierbench completion bash)
_tierbench() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]}
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W '%s' -- "$cur"))
		return
	fi
	local flags=
	case "$cmd" in
`, commandNames(spec))
	writeCases(w, spec,
		fmt.Sprintf("\thelp) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", commandNames(withFlags(spec))),
		"\tcompletion) COMPREPLY=($(compgen -W 'bash zsh fish' -- \"$cur\")); return ;;\n",
		func(c commandFlags) string {
			return fmt.Sprintf("\t%s) flags='%s' ;;\n", c.name, strings.Join(c.flags, " "))
		})
	fmt.Fprint(w, `	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _tierbench tierbench
`)
}

func writeZsh(w io.Writer, spec []commandFlags) {
	fmt.Fprint(w, `#compdef tierbench
# zsh completion for tierbench: source <(tierbench completion zsh)
_tierbench() {
	local -a cmds
	cmds=(
`)
	for _, c := range spec {
		fmt.Fprintf(w, "\t\t%s\n", zshQuote(c.name+":"+c.summary))
	}
	fmt.Fprint(w, `	)
	if (( CURRENT == 2 )); then
		_describe 'command' cmds
		return
	fi
	case $words[2] in
`)
	writeCases(w, spec,
		"\thelp) _describe 'command' cmds ;;\n",
		"\tcompletion) compadd bash zsh fish ;;\n",
		func(c commandFlags) string {
			return fmt.Sprintf("\t%s) if [[ $PREFIX == -* ]]; then compadd -- %s; else _files; fi ;;\n", c.name, strings.Join(c.flags, " "))
		})
	fmt.Fprint(w, `	esac
}
if [ "$funcstack[1]" = "_tierbench" ]; then _tierbench "$@"; else compdef _tierbench tierbench; fi
`)
}

func writeFish(w io.Writer, spec []commandFlags) {
	fmt.Fprint(w, "# fish completion for tierbench: tierbench completion fish > ~/.config/fish/completions/tierbench.fish\n")
	fmt.Fprint(w, "complete -c tierbench -f\n")
	for _, c := range spec {
		fmt.Fprintf(w, "complete -c tierbench -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	writeCases(w, spec,
		fmt.Sprintf("complete -c tierbench -n '__fish_seen_subcommand_from help' -a %s\n", fishQuote(commandNames(withFlags(spec)))),
		"complete -c tierbench -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n",
		func(c commandFlags) string {
			var b strings.Builder
			for _, f := range c.flags {
				opt := "-l " + strings.TrimPrefix(f, "--")
				if !strings.HasPrefix(f, "--") {
					opt = "-o " + strings.TrimPrefix(f, "-")
				}
				fmt.Fprintf(&b, "complete -c tierbench -n '__fish_seen_subcommand_from %s' %s -F\n", c.name, opt)
			}
			return b.String()
		})
}

func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

package main

import (
	"bytes"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docCommand is one `tierbench …` command line found in a code block of
// the docs.
type docCommand struct {
	where string   // file:line
	args  []string // the words after "tierbench"
}

// docFiles are README.md and every Markdown file under docs/, relative
// to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../../README.md"}
	err := filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDocCommands parses every `tierbench …` command line in the code
// blocks of README.md and docs/**/*.md with the subcommand's own FlagSet
// (flagSetOf), so a flag renamed or removed in the code fails here until
// the docs follow it, as does a wrong number of positional arguments.
func TestDocCommands(t *testing.T) {
	seen := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docCommands(filepath.ToSlash(strings.TrimPrefix(file, "../../")), string(data)) {
			seen++
			if err := checkDocCommand(c.args); err != "" {
				t.Errorf("%s: tierbench %s: %s", c.where, strings.Join(c.args, " "), err)
			}
		}
	}
	if seen < 20 {
		t.Errorf("got %d tierbench command lines in the docs' code blocks, want at least 20: is the parser finding them?", seen)
	}
}

// checkDocCommand parses args as tierbench would, without running
// anything, and says what is wrong ("" when nothing is).
func checkDocCommand(args []string) string {
	if len(args) == 0 {
		return "no command"
	}
	switch args[0] {
	case "version":
		return ""
	case "help":
		if len(args) > 1 {
			if _, ok := lookup(args[1]); !ok {
				return "help of an unknown command " + args[1]
			}
		}
		return ""
	}
	fs, positional, ok := flagSetOf(args[0])
	if !ok {
		return "unknown command " + args[0]
	}
	fs.SetOutput(io.Discard)
	if err := parseInterspersed(fs, args[1:]); err != nil {
		return err.Error() + didYouMean(fs, err)
	}
	if positional >= 0 && fs.NArg() != positional {
		return "takes " + itoa3(positional) + " positional argument(s), got " + strings.Join(fs.Args(), " ")
	}
	return ""
}

// docCommands finds the tierbench command lines in md's fenced code
// blocks: a line (with its backslash continuations) may hold several
// commands joined by &&, ; or |, and a comment after #. A block fenced as
// ```text holds what a command printed (an error names its command the way
// a command line would), so it is left out.
func docCommands(name, md string) []docCommand {
	var out []docCommand
	lines := strings.Split(md, "\n")
	inBlock, output := false, false
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if strings.HasPrefix(trimmed, "```") {
			inBlock = !inBlock
			output = inBlock && strings.TrimPrefix(trimmed, "```") == "text"
			continue
		}
		if !inBlock || output {
			continue
		}
		start := i
		line := lines[i]
		for strings.HasSuffix(strings.TrimRight(line, " "), `\`) && i+1 < len(lines) {
			line = strings.TrimSuffix(strings.TrimRight(line, " "), `\`) + " " + lines[i+1]
			i++
		}
		for _, cmd := range splitCommands(shellWords(line)) {
			// Leading VAR=value words set the environment.
			for len(cmd) > 0 && envAssignment.MatchString(cmd[0]) {
				cmd = cmd[1:]
			}
			if len(cmd) == 0 {
				continue
			}
			// A wrapper such as flock LOCK or env VAR=… may come first;
			// elsewhere "tierbench" is an argument (go build -o tierbench).
			for j, w := range cmd {
				if j > 0 && !wrappers[cmd[0]] {
					break
				}
				if w == "tierbench" || strings.HasSuffix(w, "/tierbench") {
					out = append(out, docCommand{where: name + ":" + itoa3(start+1), args: cmd[j+1:]})
					break
				}
			}
		}
	}
	return out
}

// envAssignment is a shell word that sets a variable for the command.
var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// wrappers are the commands the docs put before tierbench's.
var wrappers = map[string]bool{"flock": true, "sudo": true, "env": true, "time": true, "nohup": true, "taskset": true, "numactl": true}

func itoa3(n int) string { // n ≥ 0
	var b []byte
	for n > 0 || len(b) == 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// splitCommands cuts a line's words at the shell's command separators and
// drops redirections and their targets.
func splitCommands(words []string) [][]string {
	var cmds [][]string
	var cur []string
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case w == "&&" || w == "||" || w == ";" || w == "|":
			cmds = append(cmds, cur)
			cur = nil
		case w == ">" || w == ">>" || w == "<" || w == "2>" || w == "2>&1":
			if w != "2>&1" {
				i++ // the redirection's target
			}
		case strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>"):
		default:
			cur = append(cur, w)
		}
	}
	return append(cmds, cur)
}

// shellWords splits a line into words as a shell would for these docs:
// quotes group, a # starting a word begins a comment, and $(…) is one word.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			words = append(words, cur.String())
		}
		cur.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				end = len(line) - i - 1
			}
			cur.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 1
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			end := strings.IndexByte(line[i:], ')')
			if end < 0 {
				end = len(line) - i - 1
			}
			cur.WriteString(line[i : i+end+1])
			inWord = true
			i += end
		case c == '#' && !inWord:
			flush()
			return words
		case c == ' ' || c == '\t':
			flush()
		case c == ';' || c == '|' || c == '&':
			flush()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == c) {
				op += string(c)
				i++
			}
			words = append(words, op)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return words
}

// TestDocCommandsCatchStaleFlags holds the checker itself to what it is
// for: a flag that does not exist, a bench-only flag given to run, or a
// missing positional argument fails; real command lines pass.
func TestDocCommandsCatchStaleFlags(t *testing.T) {
	for _, tc := range []struct {
		line    string
		wantErr string // "" for none
	}{
		{"./tierbench run --profile quick --backends uring --pin none --shards 1,2", ""},
		{"tierbench run --profile quick -b 1024", "flag provided but not defined: -b"},
		{"tierbench run --warmup-seconds 1 --no-such-flag", "no-such-flag"},
		{"tierbench report --verify", "takes 1 positional"},
		{"tierbench report DIR --verify", ""},
		{"scripts/install-deps.sh && ./tierbench run --dat /x", "did you mean --data"},
		{"flock /tmp/l tierbench bench -s --op GET -t 8 # a comment --bogus", ""},
		{`tierbench run --server-pid $(pidof redis-server) --server-addr 127.0.0.1:6379 --server-cmd 'my-server --port {port}'`, ""},
		{"tierbench frobnicate", "unknown command frobnicate"},
		{"TIERBENCH_DATA=/mnt/x ./tierbench run --profile quick", ""},
		{"TIERBENCH_DATA=/mnt/tierbench ./tierbench run --bogus", "bogus"},
	} {
		cmds := docCommands("t.md", "```\n"+tc.line+"\n```\n")
		if len(cmds) != 1 {
			t.Errorf("%s: got %d commands, want 1", tc.line, len(cmds))
			continue
		}
		got := checkDocCommand(cmds[0].args)
		if tc.wantErr == "" && got != "" || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
			t.Errorf("%s: got %q, want %q", tc.line, got, tc.wantErr)
		}
	}
}

// TestReadmeTableIsRendered holds the README's example table to what
// `tierbench report` (the quickstart's last step, run here as the README
// writes it, on a copy of the bundle it names) prints from that bundle.
func TestReadmeTableIsRendered(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- table: "
	text := string(readme)
	i := strings.Index(text, marker)
	if i < 0 {
		t.Fatal("README.md: got no <!-- table: DIR --> marker before its example table")
	}
	rest := text[i+len(marker):]
	bundle, rest, _ := strings.Cut(rest, " -->\n")
	var table []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "|") {
			break
		}
		table = append(table, l)
	}
	dir := filepath.Join(t.TempDir(), filepath.Base(bundle))
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("../..", bundle))); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"report", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("tierbench report %s: exit %d: %s", bundle, code, stderr.String())
	}
	if want := strings.Join(table, "\n"); len(table) < 3 || !strings.Contains(stdout.String(), want) {
		t.Errorf("README's table is not what tierbench report %s prints:\ngot (report):\n%s\nwant (README):\n%s", bundle, stdout.String(), want)
	}
}

// TestReadmeQuickstart runs the README's quickstart block as written, in
// a directory holding the bundle its report line names, in its layout
// (./tierbench-results/<id>, the default --out): preflight runs for real
// (it takes about a second: no --fio), and report renders the bundle. The
// run line is parsed with run's own FlagSet and not run: the quick profile
// takes minutes (a fio sweep, then 2.7 M keys loaded and read in 64 cells),
// past what one test may take; the orchestrator's end-to-end tests run it
// at smaller sizes.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Quickstart\n")
	if !ok {
		t.Fatal("README.md: got no ## Quickstart section")
	}
	block, _, _ := strings.Cut(after, "\n## ")
	cmds := docCommands("README.md", block)
	var names []string
	for _, c := range cmds {
		names = append(names, c.args[0])
	}
	if strings.Join(names, " ") != "preflight run report" {
		t.Fatalf("README quickstart: got commands %q, want preflight, run, report", names)
	}
	src, err := filepath.Abs("../../compare/testdata/bundles/base")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bundle := filepath.Join(work, cmds[2].args[1])
	if filepath.Dir(filepath.Dir(bundle)) != work || filepath.Base(filepath.Dir(bundle)) != "tierbench-results" {
		t.Fatalf("README quickstart: report %s, want a bundle under ./tierbench-results/", cmds[2].args[1])
	}
	if err := os.CopyFS(bundle, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	for _, c := range cmds {
		if c.args[0] == "run" {
			if msg := checkDocCommand(c.args); msg != "" {
				t.Errorf("%s: tierbench %s: %s", c.where, strings.Join(c.args, " "), msg)
			}
			continue
		}
		var stdout, stderr bytes.Buffer
		code := dispatch(c.args, &stdout, &stderr)
		switch c.args[0] {
		case "preflight":
			// 1 is a failed check of this host, which is an answer too.
			if code > 1 || !strings.Contains(stdout.String(), "Host —") {
				t.Errorf("%s: tierbench %s: got exit %d and no host paragraph:\n%s%s", c.where, strings.Join(c.args, " "), code, stdout.String(), stderr.String())
			}
		case "report":
			if code != 0 || !strings.Contains(stdout.String(), "| Libaio  | no pin |") {
				t.Errorf("%s: tierbench %s: got exit %d:\n%s%s", c.where, strings.Join(c.args, " "), code, stdout.String(), stderr.String())
			}
		}
	}
}

// TestHelpExamples parses every example command line each subcommand's
// --help shows, as TestDocCommands parses the docs' (an example that
// elides its flags with … is left out), and holds both to the rule the
// run enforces: no password on a command line.
func TestHelpExamples(t *testing.T) {
	seen := 0
	for _, name := range usageOrder {
		var help bytes.Buffer
		dispatch([]string{name, "--help"}, &help, io.Discard)
		for _, c := range helpExamples(name, help.String()) {
			seen++
			if err := checkDocCommand(c.args); err != "" {
				t.Errorf("%s: tierbench %s: %s", c.where, strings.Join(c.args, " "), err)
			}
			if err := passwordOnArgv(c.args); err != "" {
				t.Errorf("%s: tierbench %s: %s", c.where, strings.Join(c.args, " "), err)
			}
		}
	}
	if seen < 20 {
		t.Errorf("got %d example command lines in the --help texts, want at least 20: is the parser finding them?", seen)
	}
}

// TestDocCommandsKeepPasswordsOff: no command line of the docs' code
// blocks puts a password on argv.
func TestDocCommandsKeepPasswordsOff(t *testing.T) {
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range docCommands(filepath.ToSlash(strings.TrimPrefix(file, "../../")), string(data)) {
			if err := passwordOnArgv(c.args); err != "" {
				t.Errorf("%s: tierbench %s: %s", c.where, strings.Join(c.args, " "), err)
			}
		}
	}
}

// helpExamples are the command lines of a --help text: lines that start
// with "  tierbench " and their backslash continuations, a closing
// "(…)" remark taken off.
func helpExamples(name, help string) []docCommand {
	var out []docCommand
	lines := strings.Split(help, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "  tierbench ") {
			continue
		}
		start, line := i, lines[i]
		for strings.HasSuffix(strings.TrimRight(line, " "), `\`) && i+1 < len(lines) {
			line = strings.TrimSuffix(strings.TrimRight(line, " "), `\`) + " " + strings.TrimSpace(lines[i+1])
			i++
		}
		line = helpRemark.ReplaceAllString(line, "")
		if strings.Contains(line, "…") || strings.Contains(line, "...") {
			continue
		}
		for _, c := range docCommands(name, "```\n"+line+"\n```\n") {
			c.where = "tierbench " + name + " --help, line " + itoa3(start+1)
			out = append(out, c)
		}
	}
	return out
}

// helpRemark is a remark in parentheses closing an example line.
var helpRemark = regexp.MustCompile(`\s+\([^()]*\)\s*$`)

// passwordOnArgv says why args put a password on a command line ("" when
// they do not): --auth with a value, or a URL with one.
func passwordOnArgv(args []string) string {
	for i, a := range args {
		if a == "--auth" || strings.HasPrefix(a, "--auth=") {
			return "gives a password with --auth, where ps shows it: show --auth-file"
		}
		if u, err := url.Parse(a); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				return "word " + itoa3(i+1) + " holds a password in a URL, where ps shows it: show --auth-file"
			}
		}
	}
	return ""
}

import type { CommandEntry, CommandFlag } from "./command-list.js";

/** The shells `aegis completion` writes a script for. */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

export function isShell(name: string): name is Shell {
  return (SHELLS as readonly string[]).includes(name);
}

/**
 * A completion script for `shell`, made from the commands' own definitions, so a new command
 * or flag is completed without anyone editing a script: command names (the second word of
 * `envelope get` after the first), each command's flags, and files elsewhere.
 */
export function completionScript(shell: Shell, commands: readonly CommandEntry[]): string {
  switch (shell) {
    case "bash":
      return bash(commands);
    case "zsh":
      return zsh(commands);
    case "fish":
      return fish(commands);
  }
}

/** Commands whose words after `--` are a command line of their own: the server `wrap` starts. */
const STARTS_A_COMMAND: readonly string[] = ["wrap"];

/** The first words typed (`verify`, `envelope`), each once, and the second words of each group. */
function words(commands: readonly CommandEntry[]): { readonly first: string[]; readonly groups: Map<string, string[]> } {
  const first: string[] = [];
  const groups = new Map<string, string[]>();
  for (const { name } of commands) {
    const [head = "", sub] = name.split(" ");
    if (!first.includes(head)) first.push(head);
    if (sub !== undefined) groups.set(head, [...(groups.get(head) ?? []), sub]);
  }
  return { first: [...first, "help"], groups };
}

/** Single-quoted for a POSIX shell (bash, zsh). */
function quoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function bash(commands: readonly CommandEntry[]): string {
  const { first, groups } = words(commands);
  const groupCases = [...groups].map(([group, subs]) => `    ${group}) subs=${quoted(subs.join(" "))} ;;`);
  // Per command: its flags, and which of them take a file, a directory or a value a shell cannot know.
  const taking = (c: CommandEntry, kind: CommandFlag["completes"]): string =>
    quoted(
      ` ${c.flags
        .filter((f) => f.value !== undefined && f.completes === kind)
        .flatMap((f) => f.names)
        .join(" ")} `,
    );
  const flagCases = commands.map(
    (c) =>
      `    ${quoted(c.name)}) flags=${quoted(c.flags.flatMap((f) => f.names).join(" "))} files=${taking(c, "file")} dirs=${taking(c, "directory")} typed=${taking(c, "nothing")} ;;`,
  );
  // A value that is one of a few words: those words, by command and flag.
  const choiceCases = commands.flatMap((c) =>
    c.flags
      .filter((f) => f.completes === "choice")
      .flatMap((f) => f.names.map((n) => `    ${quoted(`${c.name} ${n}`)}) COMPREPLY=($(compgen -W ${quoted(f.choices.join(" "))} -- "$cur")); return ;;`)),
  );

  return `# aegis completion for bash. Load it in this shell:  source <(aegis completion bash)
# or for every shell:  aegis completion bash > ~/.local/share/bash-completion/completions/aegis
_aegis() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} command subs= flags= files= dirs= typed=
  COMPREPLY=()
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W ${quoted(first.join(" "))} -- "$cur"))
    return
  fi
  command=\${COMP_WORDS[1]}
  case "$command" in
${groupCases.join("\n")}
  esac
  if [[ -n $subs ]]; then
    if [[ $COMP_CWORD -eq 2 ]]; then
      COMPREPLY=($(compgen -W "$subs" -- "$cur"))
      return
    fi
    command="$command \${COMP_WORDS[2]}"
  fi
  case "$command" in
${flagCases.join("\n")}
    help)
      # aegis help envelope <Tab>: the group's second words.
      if [[ $COMP_CWORD -eq 3 ]]; then
        case "\${COMP_WORDS[2]}" in
${[...groups].map(([group, subs]) => `          ${group}) COMPREPLY=($(compgen -W ${quoted(subs.join(" "))} -- "$cur")) ;;`).join("\n")}
        esac
        return
      fi
      COMPREPLY=($(compgen -W ${quoted(first.join(" "))} -- "$cur"))
      return
      ;;
  esac
  case "$command $prev" in
${choiceCases.join("\n")}
  esac
  # After --, a command line of its own: a command name first, then its own words (files).
  if [[ ${quoted(` ${STARTS_A_COMMAND.join(" ")} `)} == *" $command "* ]]; then
    local i
    for ((i = 2; i < COMP_CWORD; i++)); do
      [[ \${COMP_WORDS[i]} == -- ]] || continue
      if ((COMP_CWORD == i + 1)); then
        COMPREPLY=($(compgen -c -- "$cur"))
      else
        compopt -o default 2>/dev/null
      fi
      return
    done
  fi
  if [[ $command == completion && $cur != -* ]]; then
    COMPREPLY=($(compgen -W ${quoted(SHELLS.join(" "))} -- "$cur"))
    return
  fi
  # A flag's value: a file name, a directory name, or nothing a shell can know (a key, a number).
  if [[ $files == *" $prev "* ]]; then
    compopt -o default 2>/dev/null
    return
  fi
  if [[ $dirs == *" $prev "* ]]; then
    COMPREPLY=($(compgen -d -- "$cur"))
    return
  fi
  [[ $typed == *" $prev "* ]] && return
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    compopt -o default 2>/dev/null
  fi
}
complete -F _aegis aegis
`;
}

/** A zsh `_arguments` description: brackets and colons would end it early. */
function zshText(text: string): string {
  return text.replace(/([[\]:\\])/g, "\\$1");
}

/** What zsh offers for a flag's value: a space is no action, so zsh shows the value's name and offers nothing. */
const ZSH_ACTION: Readonly<Record<Exclude<CommandFlag["completes"], "choice">, string>> = { file: "_files", directory: "_files -/", nothing: " " };

function zshAction(flag: CommandFlag): string {
  return flag.completes === "choice" ? `(${flag.choices.join(" ")})` : ZSH_ACTION[flag.completes];
}

function zsh(commands: readonly CommandEntry[]): string {
  const { first, groups } = words(commands);
  const described = (name: string): string => {
    const entry = commands.find((c) => c.name === name);
    const text = entry?.description ?? (name === "help" ? "Print the help of aegis or of one command" : `${name} commands`);
    return quoted(`${name}:${text}`);
  };
  const subLists = [...groups].map(
    ([group, subs]) =>
      `    ${group}) subs=(${subs.map((s) => quoted(`${s}:${commands.find((c) => c.name === `${group} ${s}`)?.description ?? ""}`)).join(" ")}) ;;`,
  );
  const specs = commands.map((c) => {
    const lines = c.flags.flatMap((f) =>
      f.names.map((n) =>
        quoted(`${f.repeatable ? "*" : ""}${n}[${zshText(f.description)}]${f.value === undefined ? "" : `:${zshText(f.value)}:${zshAction(f)}`}`),
      ),
    );
    const operands =
      c.name === "completion"
        ? quoted(`1:shell:(${SHELLS.join(" ")})`)
        : STARTS_A_COMMAND.includes(c.name)
          ? quoted("*:server command line:_aegis_server_words")
          : quoted("*:file:_files");
    return `    ${quoted(c.name)}) args=(${[...lines, operands].join(" ")}) ;;`;
  });
  return `#compdef aegis
# aegis completion for zsh. Load it in this shell:  source <(aegis completion zsh)
# or for every shell: write it as _aegis in a directory of your $fpath, before compinit runs.
# After --, the command line wrap starts: a command name first, then files.
_aegis_server_words() {
  if [[ \${words[CURRENT-1]} == -- ]]; then _command_names; else _files; fi
}
_aegis() {
  local -a commands subs args
  local command
  if (( CURRENT == 2 )); then
    commands=(${first.map(described).join(" ")})
    _describe command commands
    return
  fi
  command=$words[2]
  case $command in
${subLists.join("\n")}
  esac
  if (( $#subs )); then
    if (( CURRENT == 3 )); then
      _describe subcommand subs
      return
    fi
    command="$command $words[3]"
  fi
  case $command in
${specs.join("\n")}
    help)
      if (( CURRENT == 4 )); then
        case $words[3] in
${subLists.map((l) => `    ${l.trim().replace(/ ;;$/, "; _describe subcommand subs; return ;;")}`).join("\n")}
        esac
        return
      fi
      commands=(${first.map(described).join(" ")}); _describe command commands; return ;;
  esac
  _arguments -s $args
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _aegis "$@"
else
  compdef _aegis aegis
fi
`;
}

/** What fish offers for a flag's value. */
const FISH_VALUE: Readonly<Record<Exclude<CommandFlag["completes"], "choice">, string>> = {
  file: " -r -F",
  directory: " -r -f -a '(__fish_complete_directories)'",
  nothing: " -r -f",
};

function fishValue(flag: CommandFlag): string {
  return flag.completes === "choice" ? ` -r -f -a ${fishQuoted(flag.choices.join(" "))}` : FISH_VALUE[flag.completes];
}

/** Single-quoted for fish, where only \\ and ' are special inside. */
function fishQuoted(text: string): string {
  return `'${text.replace(/([\\'])/g, "\\$1")}'`;
}

function fish(commands: readonly CommandEntry[]): string {
  const { first, groups } = words(commands);
  const lines: string[] = [];
  for (const name of first) {
    const entry = commands.find((c) => c.name === name);
    const text = entry?.description ?? (name === "help" ? "Print the help of aegis or of one command" : `${name} commands`);
    lines.push(`complete -c aegis -f -n '__aegis_command_is ""' -a ${name} -d ${fishQuoted(text)}`);
  }
  for (const [group, subs] of groups) {
    for (const sub of subs) {
      const text = commands.find((c) => c.name === `${group} ${sub}`)?.description ?? "";
      lines.push(`complete -c aegis -f -n '__aegis_command_is ${group}' -a ${sub} -d ${fishQuoted(text)}`);
    }
  }
  for (const c of commands) {
    for (const f of c.flags) {
      const spelled = f.names.map((n) => (n.startsWith("--") ? `-l ${n.slice(2)}` : `-s ${n.slice(1)}`)).join(" ");
      const value = f.value === undefined ? "" : fishValue(f);
      lines.push(`complete -c aegis -n ${fishQuoted(`__aegis_command_is '${c.name}'`)} ${spelled}${value} -d ${fishQuoted(f.description)}`);
    }
  }
  lines.push(`complete -c aegis -f -n '__aegis_command_is help; and __aegis_help_words 0' -a ${fishQuoted(first.join(" "))}`);
  for (const [group, subs] of groups)
    lines.push(`complete -c aegis -f -n ${fishQuoted(`__aegis_command_is help; and __aegis_help_words 1 ${group}`)} -a ${fishQuoted(subs.join(" "))}`);
  lines.push(`complete -c aegis -f -n '__aegis_command_is completion' -a ${fishQuoted(SHELLS.join(" "))}`);
  for (const name of STARTS_A_COMMAND) {
    lines.push(`complete -c aegis -f -n ${fishQuoted(`__aegis_command_is ${name}; and __aegis_after_dashdash 0`)} -a '(__fish_complete_command)'`);
  }
  const groupTest = [...groups.keys()].join(" ");
  return `# aegis completion for fish. Load it in this shell:  aegis completion fish | source
# or for every shell:  aegis completion fish > ~/.config/fish/completions/aegis.fish

# The command typed so far: "" before one, "verify", "envelope" before its second word, "envelope get".
function __aegis_command
    set -l words (commandline -opc)
    set -e words[1]
    set -l command
    for word in $words
        string match -q -- '-*' $word; and continue
        set -a command $word
        if test (count $command) -eq 1; and not contains -- $word ${groupTest}
            break
        end
        test (count $command) -eq 2; and break
    end
    string join ' ' -- $command
end

function __aegis_command_is
    set -l command (__aegis_command)
    test "$command" = "$argv[1]"
end

# After "aegis help": how many words came after it ($argv[1]), the first of them $argv[2].
function __aegis_help_words
    set -l after (commandline -opc)
    set -e after[1]
    set -e after[1]
    test (count $after) -eq $argv[1]; or return 1
    test (count $argv) -lt 2; or test "$after[1]" = "$argv[2]"
end

# After "--": whether exactly $argv[1] words came after it (the command line wrap starts).
function __aegis_after_dashdash
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words); or return 1
    test (math (count $words) - $at) -eq $argv[1]
end

# Files once a command is named: its paths. Not where a command's second word is due.
function __aegis_takes_files
    set -l command (__aegis_command)
    test -n "$command"; and not contains -- "$command" ${groupTest} help completion
end

complete -c aegis -f
complete -c aegis -n '__aegis_takes_files' -F
${lines.join("\n")}
`;
}

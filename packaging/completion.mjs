// Shell completion for mpprov, generated from the command tree the CLI itself reports
// (`mpprov describe-cli`, src/cli/describe-command.ts): a command or option added to the CLI is
// completed by the next package build, with nothing to keep in step by hand.

/** Commands below `command`, with their path of names: [['validate'], ['service', 'check'], ...]. */
function walk(command, path = []) {
  return [{ path, command }, ...command.commands.flatMap((c) => walk(c, [...path, c.name]))];
}

/** What an option's value or an argument is: a file or folder completes file names, anything else nothing. */
function valueKind(name) {
  const n = name.replace(/[<>[\].]/g, '').toLowerCase();
  if (/(^|-)(dir|folder)$/.test(n)) return 'dir';
  if (/(^|-)file$/.test(n) || n === 'target') return 'file';
  return 'other';
}

/** The value name in an option's flags: `--state-dir <dir>` -> `dir`. */
function optionValueName(option) {
  return /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? 'value';
}

function flagsOf(option) {
  return [option.short, option.long].filter((f) => f !== undefined);
}

const bashWords = (words) => words.join(' ');

/** bash: `complete -F _mpprov mpprov`; -o default falls back to file names where we offer nothing. */
export function bashCompletion(tree) {
  const nodes = walk(tree);
  const tables = nodes.map(({ path, command }) => {
    const valued = command.options.filter((o) => o.value !== 'none');
    return [
      `    '${path.join(' ')}')`,
      `      commands='${bashWords(command.commands.map((c) => c.name))}'`,
      `      options='${bashWords(command.options.flatMap(flagsOf))}'`,
      `      valued='${bashWords(valued.flatMap(flagsOf))}' ;;`,
    ].join('\n');
  });
  const choices = nodes.flatMap(({ path, command }) =>
    command.options
      .filter((o) => o.choices !== undefined)
      .flatMap((o) =>
        flagsOf(o).map((flag) => `    '${[...path, flag].join(' ')}') echo '${bashWords(o.choices)}' ;;`),
      ),
  );
  return `# bash completion for mpprov ${tree.version}: generated from the CLI's command definitions
# (mpprov describe-cli) by packaging/completion.mjs at package build time. Do not edit.

# Sets commands, options and valued (the options that take a value) for the command at $path.
_mpprov_table() {
  commands= options= valued=
  case "$path" in
${tables.join('\n')}
  esac
}

# Prints the fixed choices of option $2 of the command at $1, if it has any.
_mpprov_choices() {
  case "$1\${1:+ }$2" in
${choices.join('\n')}
    *) ;;
  esac
}

_mpprov() {
  local cur prev path commands options valued want i word list
  cur=\${COMP_WORDS[COMP_CWORD]}
  prev=\${COMP_WORDS[COMP_CWORD-1]}
  path=
  want=word
  _mpprov_table
  # The words before the cursor: a subcommand extends the path, an option that takes a value skips it.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=\${COMP_WORDS[i]}
    if [ "$want" = value ]; then want=word; continue; fi
    case " $valued " in *" $word "*) want=value; continue ;; esac
    case " $commands " in *" $word "*) path=\${path:+$path }$word; _mpprov_table ;; esac
  done
  if [ "$want" = value ]; then
    # Fixed choices, else nothing here and file names through -o default.
    list=$(_mpprov_choices "$path" "$prev")
    [ -n "$list" ] && COMPREPLY=($(compgen -W "$list" -- "$cur"))
    return 0
  fi
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [ -n "$commands" ]; then
    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
  fi
  return 0
}

complete -o bashdefault -o default -F _mpprov mpprov
`;
}

/** zsh: text inside `[...]` and single quotes. */
function zshDescription(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\\/g, '\\\\')
    .replace(/([[\]])/g, '\\$1')
    .replace(/'/g, `'\\''`);
}

function zshAction(name, choices) {
  if (choices !== undefined) return `(${choices.join(' ')})`;
  const kind = valueKind(name);
  return kind === 'dir' ? '_files -/' : kind === 'file' ? '_files' : ' ';
}

function zshOption(option) {
  const flags = flagsOf(option);
  const description = `[${zshDescription(option.description)}]`;
  const value =
    option.value === 'none' ? '' : `:${optionValueName(option)}:${zshAction(optionValueName(option), option.choices)}`;
  if (flags.length === 1) return `'${flags[0]}${description}${value}'`;
  return `'(${flags.join(' ')})'{${flags.join(',')}}'${description}${value}'`;
}

function zshArgument(argument, index) {
  const position = argument.variadic ? '*' : String(index + 1);
  return `'${argument.required ? '' : ':'}${position}:${argument.name}:${zshAction(argument.name, undefined)}'`.replace(
    `'::`,
    `':`,
  );
}

function zshFunctionName(path) {
  return ['_mpprov', ...path].join('_').replace(/-/g, '_');
}

/** zsh: a `#compdef mpprov` file for /usr/share/zsh/vendor-completions/_mpprov. */
export function zshCompletion(tree) {
  const functions = walk(tree).map(({ path, command }) => {
    const name = zshFunctionName(path);
    const options = command.options.map(zshOption);
    if (command.commands.length === 0) {
      const specs = [...options, ...command.arguments.map(zshArgument)];
      return `${name}() {\n  _arguments -s \\\n    ${specs.join(' \\\n    ')}\n}`;
    }
    const described = command.commands.map((c) => `    '${c.name}:${zshDescription(c.description)}'`);
    const dispatch = command.commands.map((c) => `        ${c.name}) ${zshFunctionName([...path, c.name])} ;;`);
    return `${name}() {
  local curcontext=$curcontext state line
  local -a subcommands
  subcommands=(
${described.join('\n')}
  )
  _arguments -C -s \\
    ${[...options, "'1: :->command'", "'*:: :->argument'"].join(' \\\n    ')}
  case $state in
    command) _describe -t commands '${['mpprov', ...path].join(' ')} command' subcommands ;;
    argument)
      curcontext=\${curcontext%:*:*}:${['mpprov', ...path].join('-')}-$words[1]:
      case $words[1] in
${dispatch.join('\n')}
      esac
      ;;
  esac
}`;
  });
  return `#compdef mpprov
# zsh completion for mpprov ${tree.version}: generated from the CLI's command definitions
# (mpprov describe-cli) by packaging/completion.mjs at package build time. Do not edit.

${functions.join('\n\n')}

_mpprov "$@"
`;
}

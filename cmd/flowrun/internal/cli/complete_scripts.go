package cli

// completionScripts are the scripts `flowrun completion SHELL` prints. Each
// asks `flowrun __complete` (complete.go) for the candidates, running the
// flowrun the user typed, so the completion always matches the binary.
var completionScripts = map[string]string{
	"bash": bashCompletion,
	"zsh":  zshCompletion,
	"fish": fishCompletion,
}

// bashCompletion passes the words up to the cursor (bash splits a word at
// the characters of COMP_WORDBREAKS, such as @, : and =; flowrun gets the
// whole words from the line, and the piece bash replaces, and answers
// with candidates from that piece on).
const bashCompletion = `# bash completion for flowrun.
# Load it with: source <(flowrun completion bash)
_flowrun_words() {
    # The words of the line up to the cursor, split at blanks as the shell
    # does (quotes kept simple), the last one the word being completed.
    local line=${COMP_LINE:0:COMP_POINT}
    local -a words
    read -r -a words <<< "$line"
    if [[ -z $line || $line == *[[:blank:]] ]]; then
        words+=("")
    fi
    printf '%s\n' "${words[@]:1}"
}

_flowrun() {
    # The piece of the word that bash replaces: what follows the last
    # character of COMP_WORDBREAKS, with that character when it is @
    # (readline keeps @ in the word it completes).
    local line=${COMP_LINE:0:COMP_POINT}
    local cur=${line##*[$COMP_WORDBREAKS]}
    local before=${line:0:${#line}-${#cur}}
    [[ $before == *@ ]] && cur=@$cur
    local -a words
    mapfile -t words < <(_flowrun_words)
    local out
    out=$("${COMP_WORDS[0]}" __complete --shell bash --piece "$cur" -- "${words[@]}" 2>/dev/null) || return 0
    COMPREPLY=()
    if [[ $out == :files ]]; then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
    fi
    [[ -n $out ]] && mapfile -t COMPREPLY <<< "$out"
    return 0
}

complete -F _flowrun flowrun
`

// zshCompletion gets value:description pairs for _describe.
const zshCompletion = `#compdef flowrun
# zsh completion for flowrun.
# Load it with: source <(flowrun completion zsh)   (after compinit)
_flowrun() {
    local -a lines
    lines=("${(@f)$("${words[1]}" __complete --shell zsh -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if [[ ${lines[1]} == :files ]]; then
        _files
        return
    fi
    lines=(${lines:#})
    # -U: flowrun matched the candidates already (a lower-case id prefix
    # completes to the id as it is written).
    (( ${#lines} )) && _describe -t values flowrun lines -U
}

if (( $+functions[compdef] )); then
    compdef _flowrun flowrun
fi
`

// fishCompletion gets value<TAB>description lines, fish's own format.
const fishCompletion = `# fish completion for flowrun.
# Load it with: flowrun completion fish | source
function __flowrun_complete
    set -l words (commandline -opc) (commandline -ct)
    set -l out (command $words[1] __complete --shell fish -- $words[2..-1] 2>/dev/null)
    if test "$out[1]" = ":files"
        __fish_complete_path (commandline -ct)
        return
    end
    printf '%s\n' $out
end

complete -c flowrun -f -a '(__flowrun_complete)'
`

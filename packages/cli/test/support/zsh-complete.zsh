# Press Tab after LINE in an interactive zsh that has aegis's completion loaded, as a user does,
# and print what the terminal showed once PATTERN (a zsh glob) appears on it.
#
#   zsh -f zsh-complete.zsh FPATH_DIR LINE PATTERN
#
# FPATH_DIR holds the completion function as `_aegis`. Bounded by the caller (`timeout`).
zmodload zsh/zpty
zpty -b shell 'zsh -f -i'
zpty -w shell "PS1='> '; fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D; LISTMAX=1000"
zpty -w -n shell "$2"$'\t'
screen=''
until [[ $screen == $~3 ]]; do
  if zpty -r -t shell chunk; then
    screen+=$chunk
  else
    sleep 0.05
  fi
done
print -r -- "$screen"
zpty -d shell

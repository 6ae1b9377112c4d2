" Vim syntax file
" Language:  TVM Relay text format (version 0.0.5), *.relay / *.rly
" Regex highlighting only; the language server adds diagnostics, hover and so on.

if exists('b:current_syntax')
  finish
endif

let s:cpo_save = &cpo
set cpo&vim

syn case match

" Operators first: later items win when several start at the same column, so comments
" (/* //) and negative numbers (-1) defined below take precedence over / and -.
syn match relayOperator "->\|=>\|==\|!=\|<=\|>=\|[-+*/<>=]"

" key=value attributes in calls and parameter lists (not ==, not =>)
syn match relayAttrKey "\<\h[A-Za-z0-9_/]*\%(\.\h[A-Za-z0-9_/]*\)*\ze\s*=[=>]\@!"
" operator names before a call: add(, nn.conv2d(, qnn.requantize(
syn match relayOpName "\<\h[A-Za-z0-9_/]*\%(\.\h[A-Za-z0-9_/]*\)*\ze\s*("
" constructors, ADT and type names (capitalised)
syn match relayTypeName "\<\u[A-Za-z0-9_/]*\>"

syn keyword relayKeyword def fn let type extern free_var ref ref_read ref_write
syn keyword relayConditional if else match
syn match relayConditional "\<match?"
syn keyword relayBoolean True False
syn keyword relayConstant None nullptr
syn keyword relayType Tensor
syn match relayDtype "\<\%(u\=int\|float\|bool\)\w*\>"
syn match relayWildcard "\<_\>"

" sigils: %x (may contain /), %0, @f
syn match relayLocal "%\h[A-Za-z0-9_/]*"
syn match relayGraphVar "%\d\+"
syn match relayGlobal "@\h[A-Za-z0-9_/]*"

" numbers: 1 2i64 -1i16 1f 0.5f 1e-05f 3f16 2.5f64 inff
syn match relayNumber "-*\<\d\+\%(i\%(16\|32\|64\)\=\)\=\>"
syn match relayFloat "-*\<\d\+\%(\.\d*\)\=\%([eE][+-]\=\d\+\)\=f\%(16\|32\|64\)\=\>"
syn match relayFloat "-*\<inff\>"
" tuple projection %t.0
syn match relayProjection "\%([A-Za-z0-9_/)]\)\@<=\.\d\+\>"

syn match relayMeta "\<meta\[[^\]]*\]\[\d\+\]"

" strings: TVM does no escape processing, the next quote ends the string
syn region relayString start=+"+ end=+"+

syn match relayVersion "#\[\s*version\s*=\s*\"[^\"]*\"\s*\]"

syn keyword relayTodo contained TODO FIXME XXX NOTE
syn match relayLineComment "//.*$" contains=relayTodo,@Spell
" block comments nest
syn region relayComment start="/\*" end="\*/" contains=relayComment,relayTodo,@Spell extend
" the /* ty=... span=... */ comments TVM's printer emits
syn region relayTypeComment start="/\*\ze\s*\%(ty\|span\)=" end="\*/" extend

" #[metadata]: the rest of the file is TVM's JSON object graph
syn include @relayJSON syntax/json.vim
unlet! b:current_syntax
syn region relayMetadata matchgroup=relayMetadataStart start="#\[\s*metadata\s*\]" end="\%$" contains=@relayJSON keepend

hi def link relayOperator     Operator
hi def link relayAttrKey      Label
hi def link relayOpName       Function
hi def link relayTypeName     Type
hi def link relayKeyword      Keyword
hi def link relayConditional  Conditional
hi def link relayBoolean      Boolean
hi def link relayConstant     Constant
hi def link relayType         Type
hi def link relayDtype        Type
hi def link relayWildcard     Special
hi def link relayLocal        Identifier
hi def link relayGraphVar     Identifier
hi def link relayGlobal       Function
hi def link relayNumber       Number
hi def link relayFloat        Float
hi def link relayProjection   Number
hi def link relayMeta         Special
hi def link relayString       String
hi def link relayVersion      PreProc
hi def link relayMetadataStart PreProc
hi def link relayTodo         Todo
hi def link relayLineComment  Comment
hi def link relayComment      Comment
hi def link relayTypeComment  SpecialComment

let b:current_syntax = 'relay'

let &cpo = s:cpo_save
unlet s:cpo_save

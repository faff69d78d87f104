// expect-error: no 'main'
// a program without a main package: p4c-bm2-ss stops without output (it has no pipeline)
action a() {
    ;
}

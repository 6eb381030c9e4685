// Requests for a c2sp.org/tlog-witness witness, built with Go's own note and tlog packages
// (golang.org/x/mod/sumdb/note and sumdb/tlog), so that aegis's witness is tested against
// another implementation's Merkle trees, consistency proofs and signed notes, not only against
// its own client. No aegis code takes part. Build and run (Debian: golang-go and
// golang-golang-x-mod-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run main.go <out dir>
//
// It writes log.vkey (the log's verifier key), and one <name>.req per request: the body of a
// POST <prefix>/add-checkpoint, sent in the order of the list below to a witness that trusts
// log.vkey for origin example.org/aegis/witness-test. What each one must be answered is in
// expected.txt, one line each: `<name> <status> [<body>]`.
package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const origin = "example.org/aegis/witness-test"

type tree struct{ hashes []tlog.Hash }

func (t *tree) add(data []byte) {
	h, err := tlog.StoredHashes(int64(t.size()), data, t)
	check(err)
	t.hashes = append(t.hashes, h...)
}

func (t *tree) size() int { return countLeaves(len(t.hashes)) }

func countLeaves(stored int) int {
	n := 0
	for int(tlog.StoredHashCount(int64(n+1))) <= stored {
		n++
	}
	return n
}

func (t *tree) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = t.hashes[x]
	}
	return out, nil
}

func (t *tree) root(n int) tlog.Hash {
	h, err := tlog.TreeHash(int64(n), t)
	check(err)
	return h
}

func (t *tree) proof(from, to int) []tlog.Hash {
	p, err := tlog.ProveTree(int64(to), int64(from), t)
	check(err)
	return p
}

func leaves(t *tree, n int, prefix string) {
	for i := t.size(); i < n; i++ {
		t.add([]byte(fmt.Sprintf("%s-%d", prefix, i)))
	}
}

func checkpoint(signer note.Signer, t *tree, n int) []byte {
	r := t.root(n)
	text := fmt.Sprintf("%s\n%d\n%s\n", origin, n, base64.StdEncoding.EncodeToString(r[:]))
	msg, err := note.Sign(&note.Note{Text: text}, signer)
	check(err)
	return msg
}

func request(old int, proof []tlog.Hash, cp []byte) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "old %d\n", old)
	for _, h := range proof {
		fmt.Fprintf(&b, "%s\n", base64.StdEncoding.EncodeToString(h[:]))
	}
	b.WriteString("\n")
	return append([]byte(b.String()), cp...)
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	out := os.Args[1]
	check(os.MkdirAll(out, 0o755))
	// A fixed seed, so that the requests are the same bytes on every run (Ed25519 is deterministic).
	seed := []byte("aegis witness test log key seed!")
	priv := ed25519.NewKeyFromSeed(seed)
	vkey, err := note.NewEd25519VerifierKey(origin, priv.Public().(ed25519.PublicKey))
	check(err)
	verifier, err := note.NewVerifier(vkey)
	check(err)
	skey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", origin, verifier.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{1}, seed...)))
	signer, err := note.NewSigner(skey)
	check(err)
	// Another key under the same name: its signature is by no key the witness trusts.
	otherPriv := ed25519.NewKeyFromSeed([]byte("another key, same origin, aegis!"))
	otherSkey := fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", origin, 0, base64.StdEncoding.EncodeToString(append([]byte{1}, otherPriv.Seed()...)))
	_ = otherSkey

	honest := &tree{}
	leaves(honest, 12, "line")
	fork := &tree{}
	leaves(fork, 5, "line")
	leaves(fork, 13, "forked") // the first 5 leaves shared, then another history

	write := func(name string, body []byte) { check(os.WriteFile(filepath.Join(out, name+".req"), body, 0o644)) }
	var expected []string
	expect := func(line string) { expected = append(expected, line) }

	check(os.WriteFile(filepath.Join(out, "log.vkey"), []byte(vkey+"\n"), 0o644))
	// In this order, to one witness:
	write("01-first", request(0, nil, checkpoint(signer, honest, 5)))
	expect("01-first 200")
	write("02-grow", request(5, honest.proof(5, 12), checkpoint(signer, honest, 12)))
	expect("02-grow 200")
	write("03-wrong-old", request(5, honest.proof(5, 12), checkpoint(signer, honest, 12)))
	expect("03-wrong-old 409 12")
	write("04-fork-honest-proof", request(12, fork.proof(12, 13), checkpoint(signer, fork, 13)))
	expect("04-fork-honest-proof 422")
	write("05-same-size-other-root", request(12, nil, checkpoint(signer, fork, 12)))
	expect("05-same-size-other-root 409 12")
	write("06-rollback", request(12, nil, checkpoint(signer, honest, 5)))
	expect("06-rollback 400")
	bad := checkpoint(signer, honest, 12)
	sigAt := strings.LastIndex(string(bad), " ") + 1
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(bad[sigAt:])))
	check(err)
	raw[10] ^= 0x01 // a bit of the signature, not of the key ID
	bad = append(bad[:sigAt], []byte(base64.StdEncoding.EncodeToString(raw)+"\n")...)
	write("07-bad-log-signature", request(12, nil, bad))
	expect("07-bad-log-signature 403")
	write("08-unknown-origin", request(0, nil, func() []byte {
		s, err := note.NewSigner(strings.Replace(skey, origin, "example.org/not-witnessed", 1))
		if err == nil {
			return checkpoint(s, honest, 5)
		}
		// The key hash is over the name: make one for the other name.
		v, _ := note.NewEd25519VerifierKey("example.org/not-witnessed", priv.Public().(ed25519.PublicKey))
		vv, _ := note.NewVerifier(v)
		s2, err := note.NewSigner(fmt.Sprintf("PRIVATE+KEY+%s+%08x+%s", "example.org/not-witnessed", vv.KeyHash(), base64.StdEncoding.EncodeToString(append([]byte{1}, seed...))))
		check(err)
		r := honest.root(5)
		msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("example.org/not-witnessed\n5\n%s\n", base64.StdEncoding.EncodeToString(r[:]))}, s2)
		check(err)
		return msg
	}()))
	expect("08-unknown-origin 404")
	write("09-malformed", []byte("old 012\n\n"+string(checkpoint(signer, honest, 12))))
	expect("09-malformed 400")
	write("10-grow-again-same-size", request(12, nil, checkpoint(signer, honest, 12)))
	expect("10-grow-again-same-size 200")
	check(os.WriteFile(filepath.Join(out, "expected.txt"), []byte(strings.Join(expected, "\n")+"\n"), 0o644))
}

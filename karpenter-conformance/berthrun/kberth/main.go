package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
)

// main serves requests, one JSON line each, until stdin closes; a
// persistent process keeps berth's catalog warm across scenarios.
func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req Request
		resp := Response{}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Error = fmt.Sprintf("decoding request: %v", err)
		} else {
			resp = serve(&req)
		}
		if err := out.Encode(&resp); err != nil {
			fmt.Fprintln(os.Stderr, "kberth:", err)
			os.Exit(1)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "kberth:", err)
		os.Exit(1)
	}
}

func serve(req *Request) Response {
	if req.Scenario == nil {
		return Response{Error: "request without scenario"}
	}
	env, err := NewEnv(req.Scenario)
	if err != nil {
		return Response{Error: err.Error()}
	}
	if req.Decide {
		res, err := env.Decide(req.Scenario)
		if err != nil {
			return Response{Error: err.Error()}
		}
		return Response{Result: res}
	}
	res, solve, err := env.Schedule(req.Scenario)
	if err != nil {
		return Response{Error: err.Error()}
	}
	return Response{Result: res, SolveNanos: solve.Nanoseconds()}
}

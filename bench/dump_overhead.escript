#!/usr/bin/env escript
%%! -pa _build/default/lib/beamscale_load/ebin -pa _build/default/lib/beamscale_stats/ebin
%% What `--dump N' adds to one request (beamscale_load_dump's hooks as a user calls them: arm,
%% one send and one 4 KiB read caught, done), side by side in one run: no dump, a dump whose
%% slots are all taken, and a dump still open (its slots never taken here: each request keeps
%% its bytes, the worst case while error reasons are left). Run from the repository root after
%% `rebar3 compile':
%%   escript bench/dump_overhead.escript
-mode(compile).

-define(N, 200000).
-define(ROUNDS, 5).

main(_) ->
    Dir = string:trim(os:cmd("mktemp -d")),
    {ok, W} = beamscale_load_dump:open(filename:join(Dir, "dump.log"), 0),
    Full = beamscale_load_dump:handle(W, 0),
    %% 64 reasons taken: the dump is full.
    [beamscale_load_dump:arm(Full) andalso
         beamscale_load_dump:done(Full, {1, beamscale_load_http, 0}, {error, {status, S}, closed})
     || S <- lists:seq(1, 64)],
    false = beamscale_load_dump:arm(Full),
    %% Open: N = 0 and the reasons never taken (every request is ok).
    Open = beamscale_load_dump:handle(W, 0),
    Req = <<"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n">>,
    Reply = binary:copy(<<"r">>, 4096),
    Med = fun(D) -> lists:nth((?ROUNDS + 1) div 2,
                              lists:sort([time(D, Req, Reply) || _ <- lists:seq(1, ?ROUNDS)]))
          end,
    [Off, F, O] = [Med(D) || D <- [none, Full, Open]],
    ok = beamscale_load_dump:close(W),
    os:cmd("rm -r " ++ Dir),
    io:format("no dump        ~7.1f ns per request~nfull dump      ~7.1f ns per request~n"
              "open dump      ~7.1f ns per request (bytes kept, 2 KiB of the reply)~n",
              [Off, F, O]).

time(Dump, Req, Reply) ->
    %% Each round as a fresh user would (a user that found the dump full remembers it).
    erase(),
    T0 = erlang:monotonic_time(nanosecond),
    loop(Dump, Req, Reply, ?N),
    (erlang:monotonic_time(nanosecond) - T0) / ?N.

loop(_Dump, _Req, _Reply, 0) -> ok;
loop(Dump, Req, Reply, K) ->
    _ = beamscale_load_dump:arm(Dump),
    ok = beamscale_load_dump:capture(sent, Req),
    ok = beamscale_load_dump:capture(received, Reply),
    ok = beamscale_load_dump:done(Dump, {1, beamscale_load_http, 0}, {ok, conn}),
    loop(Dump, Req, Reply, K - 1).

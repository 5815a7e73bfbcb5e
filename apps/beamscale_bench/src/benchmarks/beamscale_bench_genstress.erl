%% @doc genstress: clients of an echo server, with the `gen_server' behaviour or a plain process.
%% Each client first fills its own message queue with dummy messages, then calls the server and
%% waits for every answer with the dummies still queued.
-module(beamscale_bench_genstress).
-behaviour(beamscale_bench).
-behaviour(gen_server).

-export([bench_args/2, run/3, description/0, tags/0]).
-export([init/1, handle_call/3, handle_cast/2]).

%% @doc `[Kind, Clients, Dummies, Calls]' for `Kind' `gen_server' and `proc', clients scaled
%% with the logical cores.
-spec bench_args(beamscale_bench:version(), beamscale_bench:conf()) -> [beamscale_bench:args()].
bench_args(Version, Conf) ->
    {PerCore, Dummies, Calls} =
        beamscale_bench_util:sized(Version, {{8, 100, 500}, {32, 1000, 8000},
                                             {128, 1000, 40000}}),
    Clients = PerCore * beamscale_bench_util:cores(Conf),
    [[Kind, Clients, Dummies, Calls] || Kind <- [gen_server, proc]].

%% @doc Prints the calls answered and the sum of the echoed `I * K' (client `I', call `K').
-spec run(beamscale_bench:args(), [node()], beamscale_bench:conf()) -> ok.
run([Kind, Clients, Dummies, Calls | _], _Peers, _Conf) ->
    Server = start(Kind),
    Call = fun(Msg) -> call(Kind, Server, Msg) end,
    Sums = beamscale_bench_util:fork_join(
             [fun() -> client(Call, I, Dummies, Calls) end || I <- lists:seq(1, Clients)]),
    stop(Kind, Server),
    io:format("genstress: ~b calls, checksum ~b~n", [Clients * Calls, lists:sum(Sums)]).

-spec description() -> string().
description() -> "calls to an echo server, gen_server or plain, with full queues (messages)".

%% @doc One of bencherl's synthetic set: the quick preset runs it.
-spec tags() -> [beamscale_bench:tag()].
tags() -> [quick].

%%% The echo server as a gen_server

%% @private
-spec init([]) -> {ok, []}.
init([]) -> {ok, []}.

%% @private
-spec handle_call(term(), gen_server:from(), []) -> {reply, term(), []}.
handle_call(Msg, _From, State) -> {reply, Msg, State}.

%% @private
-spec handle_cast(term(), []) -> {noreply, []}.
handle_cast(_Msg, State) -> {noreply, State}.

%%% Internals

start(gen_server) ->
    {ok, Pid} = gen_server:start_link(?MODULE, [], []),
    Pid;
start(proc) ->
    spawn_link(fun echo/0).

stop(gen_server, Pid) -> gen_server:stop(Pid);
stop(proc, Pid) -> unlink(Pid), exit(Pid, kill), ok.

call(gen_server, Pid, Msg) -> gen_server:call(Pid, Msg, infinity);
call(proc, Pid, Msg) ->
    Ref = make_ref(),
    Pid ! {call, self(), Ref, Msg},
    receive {Ref, Reply} -> Reply end.

echo() ->
    receive {call, From, Ref, Msg} -> From ! {Ref, Msg} end,
    echo().

client(Call, I, Dummies, Calls) ->
    _ = [self() ! {dummy, D} || D <- lists:seq(1, Dummies)],
    Sum = lists:foldl(fun(K, Acc) -> {I1, K1} = Call({I, K}), Acc + I1 * K1 end, 0,
                      lists:seq(1, Calls)),
    flush(Dummies),
    Sum.

flush(0) -> ok;
flush(N) -> receive {dummy, _} -> flush(N - 1) end.

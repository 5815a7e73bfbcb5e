%% @private An I/O server that keeps what a benchmark prints. It is made the group leader of the
%% processes that run a benchmark on the node under test, so output of spawned processes, local
%% or on other nodes, lands here too.
-module(beamscale_bench_capture).

-export([start/0, take/1, stop/1]).

%% @doc Start a capturing I/O server, linked to the caller.
-spec start() -> pid().
start() ->
    spawn_link(fun() -> loop([]) end).

%% @doc Return what was printed since the last `take/1' and start afresh.
-spec take(pid()) -> binary().
take(Pid) ->
    Ref = monitor(process, Pid),
    Pid ! {take, self(), Ref},
    receive
        {Ref, Bin} -> demonitor(Ref, [flush]), Bin;
        {'DOWN', Ref, process, Pid, _} -> <<>>
    end.

%% @doc Stop the server.
-spec stop(pid()) -> ok.
stop(Pid) ->
    unlink(Pid),
    exit(Pid, kill),
    ok.

loop(Acc) ->
    receive
        {io_request, From, ReplyAs, Request} ->
            {Reply, Acc1} = request(Request, Acc),
            From ! {io_reply, ReplyAs, Reply},
            loop(Acc1);
        {take, From, Ref} ->
            From ! {Ref, unicode:characters_to_binary(lists:reverse(Acc))},
            loop([]);
        _ ->
            loop(Acc)
    end.

request({put_chars, Enc, Chars}, Acc) ->
    put(Enc, Chars, Acc);
request({put_chars, Enc, M, F, A}, Acc) ->
    try apply(M, F, A) of
        Chars -> put(Enc, Chars, Acc)
    catch
        _:_ -> {{error, F}, Acc}
    end;
request({put_chars, Chars}, Acc) ->
    put(latin1, Chars, Acc);
request({put_chars, M, F, A}, Acc) ->
    request({put_chars, latin1, M, F, A}, Acc);
request({requests, Reqs}, Acc) ->
    lists:foldl(fun(R, {_, A}) -> request(R, A) end, {ok, Acc}, Reqs);
request({get_geometry, _}, Acc) ->
    {{error, enotsup}, Acc};
request(getopts, Acc) ->
    {[{binary, false}, {encoding, unicode}], Acc};
request({setopts, _}, Acc) ->
    {ok, Acc};
request(_, Acc) ->
    {{error, request}, Acc}.

put(Enc, Chars, Acc) ->
    case unicode:characters_to_list(Chars, enc(Enc)) of
        L when is_list(L) -> {ok, [L | Acc]};
        _ -> {{error, put_chars}, Acc}
    end.

enc(unicode) -> unicode;
enc(utf8) -> unicode;
enc(_) -> latin1.

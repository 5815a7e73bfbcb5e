%% @private An I/O server that keeps what a benchmark prints. It is made the group leader of the
%% processes that run a benchmark on the node under test, so output of spawned processes, local
%% or on other nodes, lands here too.
-module(beamscale_bench_capture).

-export([start/0, take/1, stop/1]).

-define(MAX_BYTES, 1024 * 1024).

%% @doc Start a capturing I/O server, linked to the caller.
-spec start() -> pid().
start() ->
    spawn_link(fun() -> loop({[], 0}) end).

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
            From ! {Ref, taken(Acc)},
            loop({[], 0});
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

%% What is kept is bounded: a handler that prints without end costs ?MAX_BYTES, not the node.
put(_Enc, _Chars, {_, Size} = Acc) when Size > ?MAX_BYTES -> {ok, Acc};
put(Enc, Chars, {Kept, Size}) ->
    case unicode:characters_to_binary(Chars, enc(Enc)) of
        B when is_binary(B) -> {ok, {[B | Kept], Size + byte_size(B)}};
        _ -> {{error, put_chars}, {Kept, Size}}
    end.

taken({Kept, Size}) ->
    All = iolist_to_binary(lists:reverse(Kept)),
    case Size > ?MAX_BYTES of
        true ->
            <<(whole_chars(binary:part(All, 0, ?MAX_BYTES)))/binary,
              "\n[output cut: more than 1 MiB printed]\n">>;
        false -> All
    end.

%% A cut in the middle of a character leaves it out.
whole_chars(Bin) ->
    case unicode:characters_to_binary(Bin) of
        B when is_binary(B) -> B;
        {_, B, _} -> B
    end.

enc(unicode) -> unicode;
enc(utf8) -> unicode;
enc(_) -> latin1.

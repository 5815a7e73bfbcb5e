-module(beamscale_load_dump_tests).
-include_lib("eunit/include/eunit.hrl").

escape_test() ->
    ?assertEqual(<<"GET / HTTP/1.1\\r\\n\nA\\tb\\\\c\\x00\\xFF">>,
                 beamscale_load_dump:escape(<<"GET / HTTP/1.1\r\nA\tb\\c", 0, 255>>)).

format_test() ->
    E = #{at_us => 0, user => 7, kind => http, name => <<"home">>,
          sent => {<<"GET">>, 3}, received => {<<"HTT">>, 5000},
          reason => <<"http status 500">>},
    Text = iolist_to_binary(beamscale_load_dump:format(2, E)),
    ?assertEqual(<<"=== #2 1970-01-01T00:00:00.000000Z user 7 http home: error: http status 500\n"
                   ">>> sent 3 bytes\nGET\n"
                   "<<< received 5000 bytes (first 3 shown)\nHTT\n\n">>, Text),
    Empty = iolist_to_binary(beamscale_load_dump:format(
                               1, E#{name := none, reason := ok, received := {<<>>, 0}})),
    ?assertMatch({_, _}, binary:match(Empty, <<"http -: ok\n">>)),
    ?assertMatch({_, _}, binary:match(Empty, <<"<<< received 0 bytes\n\n">>)).

%% Users of two agents (two handles, as on two load nodes): at most N exchanges plus each error
%% reason's first, cut at 2 KiB; an unarmed user keeps nothing.
bounded_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    File = filename:join(Dir, "dump.log"),
    {ok, W} = beamscale_load_dump:open(File, 3),
    Handles = [beamscale_load_dump:handle(W, 3) || _ <- [1, 2]],
    Big = binary:copy(<<"x">>, 5000),
    Exchange = fun(H, Result) ->
                       true = beamscale_load_dump:arm(H),
                       ok = beamscale_load_dump:capture(sent, [<<"GET">>, <<" /">>]),
                       ok = beamscale_load_dump:capture(received, Big),
                       ok = beamscale_load_dump:capture(received, Big),
                       beamscale_load_dump:done(H, {1, beamscale_load_http, 0}, Result)
               end,
    [Exchange(H, {ok, conn}) || H <- Handles, _ <- [1, 2, 3, 4]],
    [Exchange(H, {error, R, closed}) || H <- Handles, R <- [timeout, {status, 500}, timeout]],
    %% Not armed: capture keeps nothing and done sends nothing.
    ok = beamscale_load_dump:capture(sent, <<"lost">>),
    ok = beamscale_load_dump:done(hd(Handles), {1, beamscale_load_http, 0}, {ok, conn}),
    ok = beamscale_load_dump:close(W),
    {ok, Log} = file:read_file(File),
    os:cmd("rm -r " ++ Dir),
    Heads = [L || <<"=== ", _/binary>> = L <- binary:split(Log, <<"\n">>, [global])],
    ?assertEqual(5, length(Heads)),
    ?assertEqual(3, length([H || H <- Heads, binary:match(H, <<": ok">>) =/= nomatch])),
    ?assertEqual(1, length([H || H <- Heads, binary:match(H, <<"timeout">>) =/= nomatch])),
    ?assertEqual(5, length(binary:matches(Log, <<"<<< received 10000 bytes (first 2048 shown)">>))),
    ?assertEqual(nomatch, binary:match(Log, <<"lost">>)),
    ?assertMatch({_, _}, binary:match(Log, <<">>> sent 5 bytes\nGET /\n">>)).

%% Once the N exchanges and the reasons are taken, a user is not armed: it keeps no bytes.
full_test() ->
    Dir = string:trim(os:cmd("mktemp -d")),
    {ok, W} = beamscale_load_dump:open(filename:join(Dir, "dump.log"), 0),
    H = beamscale_load_dump:handle(W, 0),
    [begin
         true = beamscale_load_dump:arm(H),
         beamscale_load_dump:done(H, {1, beamscale_load_http, 0}, {error, {status, S}, closed})
     end || S <- lists:seq(1, 64)],
    ?assertNot(beamscale_load_dump:arm(H)),
    ok = beamscale_load_dump:close(W),
    os:cmd("rm -r " ++ Dir).

%% Tsung's `dumptraffic' is a dump of 20 exchanges (no longer an ignored setting); "false" none.
tsung_dumptraffic_test() ->
    Text = fun(Dump) ->
                   "<?xml version=\"1.0\"?>\n<tsung loglevel=\"notice\" dumptraffic=\"" ++ Dump
                       ++ "\">\n<servers><server host=\"127.0.0.1\" port=\"8080\" type=\"tcp\"/>"
                       "</servers>\n<load><arrivalphase phase=\"1\" duration=\"2\" unit=\"second\">"
                       "<users arrivalrate=\"5\" unit=\"second\"/></arrivalphase></load>\n"
                       "<sessions><session name=\"s\" probability=\"100\" type=\"ts_http\">"
                       "<request><http url=\"/\"/></request></session></sessions>\n</tsung>\n"
           end,
    {ok, S, Ignored} = beamscale_load_tsung:from_text("t.xml", Text("true")),
    ?assertEqual(20, maps:get(dump, S)),
    ?assertEqual([], [I || I <- Ignored, string:find(I, "dumptraffic") =/= nomatch]),
    {ok, S0, _} = beamscale_load_tsung:from_text("t.xml", Text("false")),
    ?assertNot(is_map_key(dump, S0)).

%% A dump.log that cannot be written is said in words.
open_error_test() ->
    {error, {beamscale_load_dump, _} = E} = beamscale_load_dump:open("/nonexistent/dump.log", 1),
    ?assertEqual(<<"cannot write /nonexistent/dump.log: no such file or directory">>,
                 iolist_to_binary(beamscale_load_dump:format_error(E))).

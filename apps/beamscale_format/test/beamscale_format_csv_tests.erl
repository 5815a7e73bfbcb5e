-module(beamscale_format_csv_tests).
%% PropEr first: eunit.hrl leaves its ?LET alone when one is defined.
-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

quoting_test() ->
    ?assertEqual(<<"a,\"b,c\",\"say \"\"hi\"\"\",1,2.5\n">>,
                 beamscale_format_csv:line(["a", "b,c", "say \"hi\"", 1, 2.5])).

partial_last_line_dropped_test() ->
    ?assertEqual({[[<<"a">>, <<"b">>]], 4}, beamscale_format_csv:parse(<<"a,b\nc,\"d">>)),
    ?assertEqual({[[<<"a">>, <<"b">>]], 4}, beamscale_format_csv:parse(<<"a,b\nc,d">>)).

number_test() ->
    ?assertEqual(1.5, beamscale_format_csv:number(<<"1.5">>)),
    ?assertEqual(7, beamscale_format_csv:number(<<"7">>)),
    ?assertEqual(undefined, beamscale_format_csv:number(<<>>)).

field() -> ?LET(S, list(oneof([range($a, $e), $,, $", $\n, $\s])), list_to_binary(S)).
row() -> non_empty(list(field())).

%% Whatever the fields hold, lines parse back to them; any cut keeps only whole rows.
prop_round_trip() ->
    ?FORALL(Rows, list(row()),
            begin
                Bin = iolist_to_binary([beamscale_format_csv:line(R) || R <- Rows]),
                {Parsed, Size} = beamscale_format_csv:parse(Bin),
                Parsed =:= Rows andalso Size =:= byte_size(Bin)
            end).

prop_cut_keeps_whole_rows() ->
    ?FORALL({Rows, Cut}, {non_empty(list(row())), nat()},
            begin
                Bin = iolist_to_binary([beamscale_format_csv:line(R) || R <- Rows]),
                At = Cut rem (byte_size(Bin) + 1),
                {Parsed, Size} = beamscale_format_csv:parse(binary:part(Bin, 0, At)),
                lists:prefix(Parsed, Rows) andalso Size =< At
                    andalso element(1, beamscale_format_csv:parse(binary:part(Bin, 0, Size)))
                            =:= Parsed
            end).

%% A time limit per property, generous: beside a CPU hog per core a generation that reaches
%% large rows took over a minute once.
properties_test_() ->
    [{timeout, 180, ?_assert(proper:quickcheck(P, [{numtests, 300}, {max_size, 40},
                                                   {to_file, user}]))}
     || P <- [prop_round_trip(), prop_cut_keeps_whole_rows()]].

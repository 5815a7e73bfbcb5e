%% Floats written positionally: examples, and PropEr: every float reads back as itself, and one
%% of ordinary size has no exponent.
-module(beamscale_format_float_tests).

-include_lib("proper/include/proper.hrl").
-include_lib("eunit/include/eunit.hrl").

-define(D, beamscale_format_float:decimal).

examples_test_() ->
    [?_assertEqual(Text, ?D(F))
     || {F, Text} <- [{1600.0, <<"1600.0">>}, {-1600.0, <<"-1600.0">>}, {0.1, <<"0.1">>},
                      {1.0e-5, <<"0.00001">>}, {123.456, <<"123.456">>}, {0.0, <<"0.0">>},
                      {1.0e14, <<"100000000000000.0">>}, {1.0e15, <<"1.0e15">>},
                      {2.5e-7, <<"2.5e-7">>}, {5.0e-324, <<"5.0e-324">>}]].

%% Read back as JSON and CSV readers do: Erlang wants a fraction before an exponent.
read_back(Text) ->
    binary_to_float(re:replace(Text, "^(-?[0-9]+)e", "\\1.0e", [{return, binary}])).

prop_round_trip() ->
    ?FORALL(F, float(), read_back(?D(F)) == F).

prop_ordinary_size_is_positional() ->
    ?FORALL({M, E}, {float(1.0, 9.999), range(-6, 14)},
            begin
                F = M * math:pow(10, E),
                Abs = abs(F),
                Abs < 1.0e-6 orelse Abs >= 1.0e15 orelse binary:match(?D(F), <<"e">>) =:= nomatch
            end).

properties_test_() ->
    {timeout, 60,
     [?_assert(proper:quickcheck(P, [{numtests, 2000}, {to_file, user}]))
      || P <- [prop_round_trip(), prop_ordinary_size_is_positional()]]}.

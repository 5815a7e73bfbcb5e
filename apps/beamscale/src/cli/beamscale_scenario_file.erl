%% @doc The one reader of a scenario file for the commands that take one (`load', `saturate'):
%% a Tsung XML file (by its `.xml' extension, or by its content starting with `<') or an
%% Erlang-terms file (docs/scenario.md). The Tsung settings that do not change the load are
%% listed in one warning line on standard error, those not applied one a line; both are kept in
%% the scenario's `warnings' (run.json, the run's page).
-module(beamscale_scenario_file).

-export([read/1, is_xml/1]).

%% What is read of a file to tell XML from terms: a byte-order mark and blank lines at most.
-define(HEAD_BYTES, 512).

%% @doc Read and check the scenario `File'.
-spec read(file:filename()) ->
    {ok, beamscale_load_scenario:scenario()} | {error, {module(), term()}}.
read(File) ->
    case is_xml(File) of
        true ->
            case beamscale_load_tsung:load(File) of
                {ok, Scenario, Ignored} ->
                    io:put_chars(standard_error, beamscale_load_tsung:warning_line(File, Ignored)),
                    %% Kept for run.json and the run's page too.
                    {ok, Scenario#{warnings => beamscale_load_tsung:warnings(Ignored)}};
                {error, _} = Error -> Error
            end;
        false -> terms(File)
    end.

%% A terms file that may hold gRPC messages in protobuf text format (it says `proto'): parsed,
%% its messages encoded by protoc (beamscale_proto_text: the load app runs no command), then
%% checked, parse and check each bounded as `beamscale_load_scenario:load/1' bounds them. Any
%% other file, or one that does not parse, is that function's to read and to say.
terms(File) ->
    case beamscale_load_bounded:text(File) of
        {ok, Text} ->
            case string:find(Text, "proto") of
                nomatch -> beamscale_load_scenario:load(File);
                _ -> with_proto(File, Text)
            end;
        {error, _} -> beamscale_load_scenario:load(File)
    end.

with_proto(File, Text) ->
    case beamscale_load_bounded:run(fun() -> beamscale_format_terms:parse(Text) end,
                                    [beamscale_format]) of
        {ok, Entries} ->
            case beamscale_proto_text:entries(File, Entries) of
                {ok, Encoded} ->
                    beamscale_load_bounded:run(
                      fun() -> beamscale_load_scenario:check(File, Encoded) end, [beamscale_load]);
                {error, _} = Error -> Error
            end;
        _ -> beamscale_load_scenario:load(File)
    end.

%% @doc Whether `File' is XML: its extension is `.xml' (any case), or its first character
%% other than a byte-order mark and white space is `<' (a terms file starts with `{' or `%').
%% Only a regular file's content is looked at: opening a FIFO waits for a writer, and the terms
%% reader then refuses anything that is not a regular file by name.
-spec is_xml(file:filename()) -> boolean().
is_xml(File) ->
    beamscale_load_tsung:is_tsung(File) orelse
        filelib:is_regular(File) andalso
        case file:open(File, [read, binary, raw]) of
            {ok, Fd} ->
                Head = file:read(Fd, ?HEAD_BYTES),
                ok = file:close(Fd),
                case Head of
                    {ok, <<16#EF, 16#BB, 16#BF, Rest/binary>>} -> starts_with_lt(Rest);
                    {ok, Bin} -> starts_with_lt(Bin);
                    _ -> false
                end;
            {error, _} -> false
        end.

%% Byte by byte: the head of a file of binary garbage is no text (string:trim/2 raised on it,
%% an internal error instead of the terms reader's line about UTF-8).
starts_with_lt(<<C, Rest/binary>>) when C =:= $\s; C =:= $\t; C =:= $\r; C =:= $\n ->
    starts_with_lt(Rest);
starts_with_lt(<<"<", _/binary>>) -> true;
starts_with_lt(_) -> false.

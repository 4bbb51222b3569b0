/**
 * A table of cell texts (a list of records as `outputView` lays it out). The wrapper scrolls
 * sideways on a narrow screen, so it takes the keyboard focus (arrow keys scroll it).
 */
export default function DataTable({ columns, rows, label = "表" }: { columns: string[]; rows: string[][]; label?: string }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={index}>
              {row.map((cell, column) => (
                <td key={column}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
